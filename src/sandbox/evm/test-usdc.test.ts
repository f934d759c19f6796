// TestUSDC itself, on a real anvil: the EIP-3009 behaviour x402 relies on, as FiatToken v2.2 has it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  createPublicClient,
  createWalletClient,
  domainSeparator,
  http,
  parseSignature,
  toHex,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NETWORKS, type EvmNetwork } from '../../x402/networks.ts';
import { startEvmSandbox, type EvmSandbox } from './evm-sandbox.ts';
import { loadTestUsdcArtifact } from './test-usdc-artifact.ts';
import { transferWithAuthorizationTypes } from '../../payments/facilitators/evm/eip3009-abi.ts';

const { abi } = loadTestUsdcArtifact();
const polygonAmoy = NETWORKS['polygon-amoy'] as EvmNetwork;
let sandbox: EvmSandbox;
let client: PublicClient;

before(async () => {
  sandbox = await startEvmSandbox(polygonAmoy);
  client = createPublicClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), pollingInterval: 20 });
});
after(() => sandbox.stop());

const now = (): bigint => BigInt(Math.floor(Date.now() / 1000));
const newAccount = (): LocalAccount => privateKeyToAccount(generatePrivateKey());

async function funded(): Promise<LocalAccount> {
  const account = newAccount();
  await sandbox.faucet(account.address, 1_000_000n); // 1 USDC and gas
  return account;
}

type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

function authorization(from: Address, to: Address, overrides: Partial<Authorization> = {}): Authorization {
  return {
    from,
    to,
    value: 250_000n,
    validAfter: now() - 600n,
    validBefore: now() + 60n,
    nonce: toHex(randomBytes(32)),
    ...overrides,
  };
}

const domain = () => ({ name: 'USDC', version: '2', chainId: 80002, verifyingContract: sandbox.asset });
// ReceiveWithAuthorization signs the same fields as TransferWithAuthorization under its own name
const fields = transferWithAuthorizationTypes.TransferWithAuthorization;

function sign(signer: LocalAccount, auth: Authorization, kind: 'Transfer' | 'Receive' = 'Transfer'): Promise<Hex> {
  const primaryType = `${kind}WithAuthorization` as const;
  return signer.signTypedData({ domain: domain(), types: { [primaryType]: fields }, primaryType, message: auth });
}

function args(auth: Authorization): readonly unknown[] {
  return [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
}

function vrs(signature: Hex): [number, Hex, Hex] {
  const { r, s, yParity } = parseSignature(signature);
  return [27 + yParity, r, s];
}

/** Sends a transaction as `sender` and returns its receipt status. */
async function send(sender: LocalAccount, functionName: string, callArgs: readonly unknown[]): Promise<string> {
  const wallet = createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account: sender });
  const hash = await wallet.writeContract({ address: sandbox.asset, abi, functionName, args: callArgs });
  return (await client.waitForTransactionReceipt({ hash })).status;
}

/** Simulates a call as `sender`; resolves to the revert string, or undefined when it would succeed. */
async function revertOf(sender: Address, functionName: string, callArgs: readonly unknown[]): Promise<string | undefined> {
  try {
    await client.simulateContract({ account: sender, address: sandbox.asset, abi, functionName, args: callArgs });
    return undefined;
  } catch (error) {
    return /reverted with the following reason:\s*\n?(.+)/.exec(String((error as Error).message))?.[1]?.trim() ?? String(error);
  }
}

const read = (functionName: string, callArgs: readonly unknown[] = []): Promise<unknown> =>
  client.readContract({ address: sandbox.asset, abi, functionName, args: callArgs });

test('metadata and EIP-712 domain match the network registry and the running chain', async () => {
  assert.equal(await read('name'), 'USDC');
  assert.equal(await read('symbol'), 'USDC');
  assert.equal(await read('decimals'), 6);
  assert.equal(await read('version'), '2');
  assert.equal(await read('DOMAIN_SEPARATOR'), domainSeparator({ domain: domain() }));
});

test('only the deployer mints', async () => {
  const stranger = await funded();
  assert.equal(await revertOf(stranger.address, 'mint', [stranger.address, 1n]), 'FiatToken: caller is not a minter');
});

test('ERC-20 transfer, approve and transferFrom', async () => {
  const [alice, bob] = [await funded(), await funded()];
  assert.equal(await send(alice, 'transfer', [bob.address, 100n]), 'success');
  assert.equal(await send(alice, 'approve', [bob.address, 50n]), 'success');
  assert.equal(await read('allowance', [alice.address, bob.address]), 50n);
  assert.equal(await revertOf(bob.address, 'transferFrom', [alice.address, bob.address, 51n]), 'ERC20: transfer amount exceeds allowance');
  assert.equal(await send(bob, 'transferFrom', [alice.address, bob.address, 50n]), 'success');
  assert.equal(await read('balanceOf', [bob.address]), 1_000_150n);
  assert.equal(await revertOf(alice.address, 'transfer', [bob.address, 10_000_000n]), 'ERC20: transfer amount exceeds balance');
});

test('transferWithAuthorization, in both signature forms, works once per nonce', async () => {
  const [payer, relayer] = [await funded(), await funded()];
  const payee = newAccount().address;

  const first = authorization(payer.address, payee);
  const firstSignature = await sign(payer, first);
  assert.equal(await send(relayer, 'transferWithAuthorization', [...args(first), ...vrs(firstSignature)]), 'success');
  assert.equal(await read('authorizationState', [payer.address, first.nonce]), true);
  assert.equal(
    await revertOf(relayer.address, 'transferWithAuthorization', [...args(first), ...vrs(firstSignature)]),
    'FiatTokenV2: authorization is used or canceled',
  );

  const second = authorization(payer.address, payee);
  assert.equal(await send(relayer, 'transferWithAuthorization', [...args(second), await sign(payer, second)]), 'success');
  assert.equal(await read('balanceOf', [payee]), 500_000n);
});

test('transferWithAuthorization rejects bad signatures and closed time windows', async () => {
  const payer = await funded();
  const relayer = sandbox.settlementAddress;
  const auth = authorization(payer.address, newAccount().address);
  const [v, r, s] = vrs(await sign(payer, auth));
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const call = (...signature: unknown[]) => revertOf(relayer, 'transferWithAuthorization', [...args(auth), ...signature]);

  assert.equal(await call(v, r, s), undefined, 'the untouched signature is fine');
  assert.equal(await call(v === 27 ? 28 : 27, r, toHex(n - BigInt(s), { size: 32 })), "ECRecover: invalid signature 's' value");
  assert.equal(await call(29, r, s), "ECRecover: invalid signature 'v' value");
  assert.equal(await call(v, toHex(0n, { size: 32 }), s), 'ECRecover: invalid signature');
  assert.equal(await call(`0x${'11'.repeat(64)}`), 'ECRecover: invalid signature length');
  assert.equal(await call(...vrs(await sign(newAccount(), auth))), 'FiatTokenV2: invalid signature');

  const expired = authorization(payer.address, auth.to, { validBefore: now() - 10n });
  assert.equal(
    await revertOf(relayer, 'transferWithAuthorization', [...args(expired), ...vrs(await sign(payer, expired))]),
    'FiatTokenV2: authorization is expired',
  );
  const early = authorization(payer.address, auth.to, { validAfter: now() + 100n });
  assert.equal(
    await revertOf(relayer, 'transferWithAuthorization', [...args(early), ...vrs(await sign(payer, early))]),
    'FiatTokenV2: authorization is not yet valid',
  );
});

test('receiveWithAuthorization: only the payee may submit it', async () => {
  const [payer, payee] = [await funded(), await funded()];
  const auth = authorization(payer.address, payee.address);
  const signature = vrs(await sign(payer, auth, 'Receive'));
  assert.equal(
    await revertOf(sandbox.settlementAddress, 'receiveWithAuthorization', [...args(auth), ...signature]),
    'FiatTokenV2: caller must be the payee',
  );
  assert.equal(await send(payee, 'receiveWithAuthorization', [...args(auth), ...signature]), 'success');
  assert.equal(await read('balanceOf', [payee.address]), 1_250_000n);
});

test('cancelAuthorization burns a nonce before it is used', async () => {
  const payer = await funded();
  const auth = authorization(payer.address, newAccount().address);
  const cancel = await payer.signTypedData({
    domain: domain(),
    types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
    primaryType: 'CancelAuthorization',
    message: { authorizer: payer.address, nonce: auth.nonce },
  });
  assert.equal(await send(payer, 'cancelAuthorization', [payer.address, auth.nonce, ...vrs(cancel)]), 'success');
  assert.equal(
    await revertOf(sandbox.settlementAddress, 'transferWithAuthorization', [...args(auth), ...vrs(await sign(payer, auth))]),
    'FiatTokenV2: authorization is used or canceled',
  );
});
