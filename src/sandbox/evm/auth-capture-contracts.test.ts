// The sandbox's auth-capture escrow settles what the official @x402/evm 2.27 client signs, as Coinbase's
// deployed Commerce Payments v1.0 does: the payer signs an ERC-3009 ReceiveWithAuthorization for the canonical
// escrow and collector, and the operator (the requirements' captureAuthorizer) charges it in one call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createPublicClient, createWalletClient, http, keccak256, zeroAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { AUTH_CAPTURE_ESCROW_V1_0_ADDRESS, EIP3009_TOKEN_COLLECTOR_V1_0_ADDRESS, toClientEvmSigner } from '@x402/evm';
import { AuthCaptureEvmScheme } from '@x402/evm/auth-capture/client';
import type { PaymentRequirements } from '@x402/core/types';
import { NETWORKS, type EvmNetwork } from '../../x402/networks.ts';
import { startEvmSandbox, type EvmSandbox } from './evm-sandbox.ts';
import {
  AUTH_CAPTURE_PLACEMENT,
  authCaptureAbi,
  authCaptureRuntimeCode,
  loadAuthCaptureArtifact,
} from './auth-capture-contracts.ts';
import { MULTICALL3_ADDRESS } from '../../payments/facilitators/evm/multicall3-abi.ts';

const network = NETWORKS.base as EvmNetwork;
const escrow = AUTH_CAPTURE_ESCROW_V1_0_ADDRESS as Address;
const collector = EIP3009_TOKEN_COLLECTOR_V1_0_ADDRESS as Address;
const abi = authCaptureAbi('AuthCaptureEscrow');

let sandbox: EvmSandbox;
let client: ReturnType<typeof createPublicClient>;
let operator: PrivateKeyAccount;

before(async () => {
  sandbox = await startEvmSandbox(network);
  client = createPublicClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl) });
  operator = privateKeyToAccount(sandbox.settlementPrivateKey);
});
after(() => sandbox.stop());

function requirements(amount: bigint): PaymentRequirements {
  const now = Math.floor(Date.now() / 1000);
  return {
    scheme: 'auth-capture',
    network: `eip155:${network.chainId}`,
    asset: sandbox.asset,
    amount: amount.toString(),
    payTo: sandbox.payTo,
    maxTimeoutSeconds: 300,
    extra: {
      name: sandbox.eip712.name,
      version: sandbox.eip712.version,
      captureAuthorizer: operator.address,
      feeRecipient: zeroAddress,
      captureDeadline: now + 3600,
      refundDeadline: now + 86_400,
      minFeeBps: 0,
      maxFeeBps: 0,
      authCaptureEscrow: escrow,
    },
  };
}

interface Eip3009Payload {
  authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
  signature: Hex;
  salt: Hex;
}

/** A funded payer signs `req` with the official client; returns the PaymentInfo the client signed over. */
async function sign(req: PaymentRequirements) {
  const payer = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(payer.address, 10_000n);
  const scheme = new AuthCaptureEvmScheme(toClientEvmSigner(payer, createPublicClient({ transport: http(sandbox.rpcUrl) })));
  const { payload } = await scheme.createPaymentPayload(2, req);
  const { authorization, signature, salt } = payload as unknown as Eip3009Payload;
  assert.equal(authorization.to, collector, 'the client signs for the v1.0 collector');
  const extra = req.extra as { captureAuthorizer: Address; feeRecipient: Address; captureDeadline: number; refundDeadline: number; minFeeBps: number; maxFeeBps: number };
  // the PaymentInfo the client hashed into the authorization's nonce, rebuilt from requirements and payload
  const paymentInfo = {
    operator: extra.captureAuthorizer,
    payer: authorization.from,
    receiver: req.payTo as Address,
    token: req.asset as Address,
    maxAmount: BigInt(req.amount),
    preApprovalExpiry: Number(authorization.validBefore),
    authorizationExpiry: extra.captureDeadline,
    refundExpiry: extra.refundDeadline,
    minFeeBps: extra.minFeeBps,
    maxFeeBps: extra.maxFeeBps,
    feeReceiver: extra.feeRecipient,
    salt: BigInt(salt),
  };
  return { payer: payer.address, paymentInfo, signature };
}

const operatorWallet = () => createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account: operator });

async function charge(paymentInfo: Awaited<ReturnType<typeof sign>>['paymentInfo'], amount: bigint, signature: Hex) {
  const hash = await operatorWallet().writeContract({
    address: escrow,
    abi,
    functionName: 'charge',
    args: [paymentInfo, amount, collector, signature, 0, zeroAddress],
  });
  return client.waitForTransactionReceipt({ hash });
}

test('the escrow, its TokenStore and the collector name each other at the canonical addresses', async () => {
  assert.equal(await client.readContract({ address: escrow, abi, functionName: 'tokenStoreImplementation' }), AUTH_CAPTURE_PLACEMENT.TokenStore);
  const read = (name: 'TokenStore' | 'ERC3009PaymentCollector', functionName: 'authCaptureEscrow' | 'multicall3') =>
    client.readContract({ address: AUTH_CAPTURE_PLACEMENT[name], abi: authCaptureAbi(name), functionName });
  assert.equal(await read('TokenStore', 'authCaptureEscrow'), escrow);
  assert.equal(await read('ERC3009PaymentCollector', 'authCaptureEscrow'), escrow);
  assert.equal(await read('ERC3009PaymentCollector', 'multicall3'), MULTICALL3_ADDRESS);
});

test('the laid-down code is what a real deployment leaves, at its own address', async () => {
  // deploy the escrow for real elsewhere: its constructor creates a TokenStore; fill the artifact's runtime code
  // with those two addresses and it must match byte for byte
  const { bytecode } = loadAuthCaptureArtifact().contracts.AuthCaptureEscrow;
  const hash = await operatorWallet().deployContract({ abi, bytecode });
  const { contractAddress } = await client.waitForTransactionReceipt({ hash });
  assert.ok(contractAddress);
  const store = (await client.readContract({ address: contractAddress, abi, functionName: 'tokenStoreImplementation' })) as Address;
  const codeHash = async (address: Address) => keccak256((await client.getCode({ address }))!);
  assert.equal(await codeHash(contractAddress), keccak256(authCaptureRuntimeCode('AuthCaptureEscrow', 'tokenStoreImplementation', store)));
  assert.equal(await codeHash(store), keccak256(authCaptureRuntimeCode('TokenStore', 'authCaptureEscrow', contractAddress)));
});

test("a payment signed by the official client is charged by the operator: the receiver gets it all", async () => {
  const req = requirements(1234n);
  const { payer, paymentInfo, signature } = await sign(req);
  const receiverBefore = await sandbox.balanceOf(sandbox.payTo);

  const receipt = await charge(paymentInfo, 1234n, signature);
  assert.equal(receipt.status, 'success');
  assert.equal(await sandbox.balanceOf(payer), 10_000n - 1234n);
  assert.equal(await sandbox.balanceOf(sandbox.payTo), receiverBefore + 1234n);

  const paymentHash = (await client.readContract({ address: escrow, abi, functionName: 'getHash', args: [paymentInfo] })) as Hex;
  assert.deepEqual(await client.readContract({ address: escrow, abi, functionName: 'paymentState', args: [paymentHash] }), [true, 0n, 1234n]);

  // the same payment cannot be charged twice
  await assert.rejects(charge(paymentInfo, 1234n, signature), /PaymentAlreadyCollected/);
  assert.equal(await sandbox.balanceOf(payer), 10_000n - 1234n);
});

test('charging less than the signed maximum returns the difference to the payer', async () => {
  const req = requirements(1234n);
  const { payer, paymentInfo, signature } = await sign(req);
  const receiverBefore = await sandbox.balanceOf(sandbox.payTo);

  assert.equal((await charge(paymentInfo, 1000n, signature)).status, 'success');
  assert.equal(await sandbox.balanceOf(payer), 10_000n - 1000n);
  assert.equal(await sandbox.balanceOf(sandbox.payTo), receiverBefore + 1000n);
  assert.equal(await sandbox.balanceOf(collector), 0n, 'the collector keeps nothing');
});

test('only the captureAuthorizer may charge', async () => {
  const { paymentInfo, signature } = await sign(requirements(1234n));
  const intruder = privateKeyToAccount(generatePrivateKey());
  await sandbox.faucet(intruder.address, 1n);
  const wallet = createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account: intruder });
  await assert.rejects(
    wallet.writeContract({ address: escrow, abi, functionName: 'charge', args: [paymentInfo, 1234n, collector, signature, 0, zeroAddress] }),
    /InvalidSender/,
  );
});

test('the committed artifact was built from the vendored sources', () => {
  const { sourcesSha256 } = loadAuthCaptureArtifact();
  assert.ok(Object.keys(sourcesSha256).length >= 7);
  for (const [file, expected] of Object.entries(sourcesSha256)) {
    const source = readFileSync(new URL(`../../../contracts/commerce-payments/${file}`, import.meta.url), 'utf8');
    assert.equal(
      createHash('sha256').update(source, 'utf8').digest('hex'),
      expected,
      `stale artifact (${file}): run \`npx node scripts/compile-contracts.ts --auth-capture\``,
    );
  }
});
