// LocalEvmFacilitator against a real anvil with the deployed TestUSDC, paid with signatures made by
// the official x402 v1 client code (x402/schemes), exactly as x402-fetch makes them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  parseAbi,
  parseSignature,
  toHex,
  type Address,
  type Hex,
  type LocalAccount,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { exact } from 'x402/schemes';
import { decodeHeader } from '../../../x402/encoding.ts';
import { NETWORKS, type EvmNetwork } from '../../../x402/networks.ts';
import type { PaymentPayload, PaymentRequirements } from '../../../x402/types.ts';
import { startEvmSandbox, type EvmSandbox } from '../../../sandbox/evm/evm-sandbox.ts';
import { LocalEvmFacilitator } from './local-evm.ts';
import { onV1Wire, proofOf, requirementOf } from '../../../../test/support/v1-wire-facilitator.ts';
import { eip3009Abi } from './eip3009-abi.ts';
import { MULTICALL3_ADDRESS } from './multicall3-abi.ts';
import { ProcessNonces, type NonceAllocator, type NonceUse, type PendingCount } from '../../../store/nonce-allocator.ts';

const base = NETWORKS.base as EvmNetwork;
const PRICE = '10000'; // 0.01 USDC
let sandbox: EvmSandbox;
let facilitator: ReturnType<typeof onV1Wire<LocalEvmFacilitator>>;

before(async () => {
  sandbox = await startEvmSandbox(base);
  facilitator = onV1Wire(new LocalEvmFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: sandbox.settlementPrivateKey,
    asset: sandbox.asset,
    eip712: sandbox.eip712,
    receiptTimeoutMs: 5_000,
    pollingIntervalMs: 20,
  }));
});
after(() => sandbox.stop());

// ---- helpers: what a server asks for, and what a client pays with ----

function requirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'base',
    maxAmountRequired: PRICE,
    resource: 'http://127.0.0.1/api/v1/ai/chat',
    description: 'chat completion',
    mimeType: 'application/json',
    payTo: sandbox.payTo,
    maxTimeoutSeconds: 60,
    asset: sandbox.asset,
    outputSchema: { input: { type: 'http', method: 'POST', discoverable: true } },
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

const newAccount = (): LocalAccount => privateKeyToAccount(generatePrivateKey());
const randomAddress = (): Address => newAccount().address;

async function fundedPayer(amount?: bigint): Promise<LocalAccount> {
  const payer = newAccount();
  await sandbox.faucet(payer.address, amount);
  return payer;
}

type OfficialRequirements = Parameters<typeof exact.evm.preparePaymentHeader>[2];
type Unsigned = ReturnType<typeof exact.evm.preparePaymentHeader>;

/**
 * Pays `signed` requirements the way x402-fetch does (validAfter = now - 600, validBefore =
 * now + maxTimeoutSeconds, random nonce, value = maxAmountRequired); `tamper` may edit the
 * authorization before signing, and `signer` may differ from the payer.
 */
async function pay(
  payer: LocalAccount,
  signed: PaymentRequirements,
  options: { tamper?: (a: Unsigned['payload']['authorization']) => void; signer?: LocalAccount } = {},
): Promise<PaymentPayload> {
  const official = signed as unknown as OfficialRequirements;
  const unsigned = exact.evm.preparePaymentHeader(payer.address, 1, official);
  options.tamper?.(unsigned.payload.authorization);
  const payment = await exact.evm.signPaymentHeader(options.signer ?? payer, official, unsigned);
  return payment as unknown as PaymentPayload;
}

const now = (): number => Math.floor(Date.now() / 1000);

async function balances(payer: Address): Promise<[bigint, bigint]> {
  return [await sandbox.balanceOf(payer), await sandbox.balanceOf(sandbox.payTo)];
}

// ---- the happy path ----

test('requirementExtra() is the token EIP-712 domain clients sign with', async () => {
  assert.deepEqual(await facilitator.requirementExtra(), { name: 'USD Coin', version: '2' });
});

test('a valid payment from the official client verifies and settles for exactly the price', async () => {
  const payer = await fundedPayer();
  const header = await exact.evm.createPaymentHeader(payer, 1, requirements() as unknown as OfficialRequirements);
  const payment = decodeHeader(header) as PaymentPayload; // what the gateway receives in X-PAYMENT
  const [payerBefore, payToBefore] = await balances(payer.address);

  assert.deepEqual(await facilitator.verify(payment, requirements()), { isValid: true, payer: payer.address });
  const outcome = await facilitator.settle(payment, requirements());

  assert.equal(outcome.status, 'settled');
  assert.equal(outcome.status === 'settled' && outcome.payer, payer.address);
  assert.match(outcome.status === 'settled' ? outcome.transaction : '', /^0x[0-9a-f]{64}$/);
  const [payerAfter, payToAfter] = await balances(payer.address);
  assert.equal(payerBefore - payerAfter, 10_000n);
  assert.equal(payToAfter - payToBefore, 10_000n);
});

test('concurrent settlements from one settlement key all land', async () => {
  const payers = await Promise.all([fundedPayer(), fundedPayer(), fundedPayer(), fundedPayer()]);
  const payments = await Promise.all(payers.map((p) => pay(p, requirements())));
  const outcomes = await Promise.all(payments.map((p) => facilitator.settle(p, requirements())));
  assert.deepEqual(outcomes.map((o) => o.status), ['settled', 'settled', 'settled', 'settled']);
});

test('verifications and settlements interleaved, 8 in flight, 48 in all: every one verifies and lands', async () => {
  // each verification reads the chain while other settlements are being mined (a pruned anvil failed some)
  const payers = await Promise.all(Array.from({ length: 8 }, () => fundedPayer()));
  const outcomes: string[] = [];
  await Promise.all(
    payers.map(async (payer) => {
      for (let i = 0; i < 6; i++) {
        const payment = await pay(payer, requirements());
        const verified = await facilitator.verify(payment, requirements());
        outcomes.push(verified.isValid ? (await facilitator.settle(payment, requirements())).status : verified.invalidReason);
      }
    }),
  );
  assert.deepEqual(outcomes, Array(48).fill('settled'));
});

// ---- the tampering matrix: each is refused with its own reason, and no funds move ----

interface Case {
  name: string;
  reason: string;
  payment: (payer: LocalAccount) => Promise<PaymentPayload>;
  /** the requirements the server checks against (default: the real ones) */
  checked?: () => PaymentRequirements;
  funded?: boolean;
}

const cases: Case[] = [
  {
    name: 'pays someone else',
    reason: 'invalid_exact_evm_payload_recipient_mismatch',
    payment: (p) => pay(p, requirements({ payTo: randomAddress() })),
  },
  {
    name: 'pays less than the price',
    reason: 'invalid_exact_evm_payload_authorization_value',
    payment: (p) => pay(p, requirements({ maxAmountRequired: '9999' })),
  },
  {
    name: 'pays more than the price',
    reason: 'invalid_exact_evm_payload_authorization_value',
    payment: (p) => pay(p, requirements({ maxAmountRequired: '10001' })),
  },
  {
    name: 'requirements name another asset',
    reason: 'asset_mismatch',
    payment: (p) => pay(p, requirements({ asset: randomAddress() })),
    checked: () => requirements({ asset: randomAddress() }),
  },
  {
    name: 'signed for another token contract',
    reason: 'invalid_exact_evm_payload_signature',
    payment: (p) => pay(p, requirements({ asset: randomAddress() })),
  },
  {
    name: 'signed for another chain id (polygon, 137)',
    reason: 'invalid_exact_evm_payload_signature',
    payment: async (p) => ({ ...(await pay(p, requirements({ network: 'polygon' }))), network: 'base' }),
  },
  {
    name: 'signed with another EIP-712 domain name',
    reason: 'invalid_exact_evm_payload_signature',
    payment: (p) => pay(p, requirements({ extra: { name: 'USDC', version: '2' } })),
  },
  {
    name: 'validBefore already passed',
    reason: 'invalid_exact_evm_payload_authorization_valid_before',
    payment: (p) => pay(p, requirements(), { tamper: (a) => void (a.validBefore = String(now() - 1)) }),
  },
  {
    name: 'validBefore too close to settle (under 6 s)',
    reason: 'invalid_exact_evm_payload_authorization_valid_before',
    payment: (p) => pay(p, requirements(), { tamper: (a) => void (a.validBefore = String(now() + 3)) }),
  },
  {
    name: 'validAfter in the future',
    reason: 'invalid_exact_evm_payload_authorization_valid_after',
    payment: (p) => pay(p, requirements(), { tamper: (a) => void (a.validAfter = String(now() + 60)) }),
  },
  {
    name: 'signed by another key',
    reason: 'invalid_exact_evm_payload_signature',
    payment: (p) => pay(p, requirements(), { signer: newAccount() }),
  },
  {
    name: 'malleable (high-s) twin of a valid signature',
    reason: 'invalid_exact_evm_payload_signature',
    payment: async (p) => {
      const payment = await pay(p, requirements());
      const signature = (payment.payload as { signature: Hex }).signature;
      return { ...payment, payload: { ...payment.payload, signature: highS(signature) } };
    },
  },
  {
    name: 'payer cannot cover the price',
    reason: 'insufficient_funds',
    payment: (p) => pay(p, requirements()),
    funded: false,
  },
  {
    name: 'another scheme',
    reason: 'invalid_scheme',
    payment: async (p) => ({ ...(await pay(p, requirements())), scheme: 'upto' }),
  },
  {
    name: 'payload for another network',
    reason: 'invalid_network',
    payment: async (p) => ({ ...(await pay(p, requirements())), network: 'base-sepolia' }),
  },
  {
    name: 'a payload that is not an exact EVM payload',
    reason: 'invalid_payload',
    payment: async (p) => ({ ...(await pay(p, requirements())), payload: { transaction: 'AQID' } }),
  },
];

for (const c of cases) {
  test(`refused: ${c.name} -> ${c.reason}`, async () => {
    const payer = c.funded === false ? newAccount() : await fundedPayer();
    const payment = await c.payment(payer);
    const checked = c.checked?.() ?? requirements();
    const before = await balances(payer.address);

    const verdict = await facilitator.verify(payment, checked);
    assert.equal(verdict.isValid, false);
    assert.equal(!verdict.isValid && verdict.invalidReason, c.reason);

    const outcome = await facilitator.settle(payment, checked);
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.status === 'failed' && outcome.reason, c.reason);
    assert.deepEqual(await balances(payer.address), before, 'no funds moved');
  });
}

test('refused: an authorization settles once; the second settle fails and funds move once', async () => {
  const payer = await fundedPayer();
  const payment = await pay(payer, requirements());
  const [payerBefore, payToBefore] = await balances(payer.address);

  assert.equal((await facilitator.settle(payment, requirements())).status, 'settled');
  const again = await facilitator.settle(payment, requirements());
  assert.deepEqual(again, { status: 'failed', reason: 'nonce_already_used', payer: payer.address });
  assert.deepEqual(await facilitator.verify(payment, requirements()), {
    isValid: false,
    invalidReason: 'nonce_already_used',
    payer: payer.address,
  });

  const [payerAfter, payToAfter] = await balances(payer.address);
  assert.equal(payerBefore - payerAfter, 10_000n);
  assert.equal(payToAfter - payToBefore, 10_000n);
});

test('refused by the simulation: a facilitator told the wrong EIP-712 domain cannot settle anything', async () => {
  // Off-chain the signature checks out against the (wrong) domain; only the token itself knows better.
  const misconfigured = onV1Wire(new LocalEvmFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: sandbox.settlementPrivateKey,
    asset: sandbox.asset,
    eip712: { name: 'USDC', version: '2' }, // base-sepolia's, not base's
    receiptTimeoutMs: 5_000,
    pollingIntervalMs: 20,
  }));
  const wrongDomain = requirements({ extra: await misconfigured.requirementExtra() });
  const payer = await fundedPayer();
  const payment = await pay(payer, wrongDomain);
  const before = await balances(payer.address);

  assert.deepEqual(await misconfigured.verify(payment, wrongDomain), {
    isValid: false,
    invalidReason: 'invalid_exact_evm_payload_signature',
    payer: payer.address,
  });
  assert.equal((await misconfigured.settle(payment, wrongDomain)).status, 'failed');
  assert.deepEqual(await balances(payer.address), before);
});

test('refused: requirements whose extra is not the token domain', async () => {
  const payer = await fundedPayer();
  const odd = requirements({ extra: { name: 'USD Coin', version: '1' } });
  const verdict = await facilitator.verify(await pay(payer, odd), odd);
  assert.equal(!verdict.isValid && verdict.invalidReason, 'eip712_domain_mismatch');
});

// ---- unknown outcomes and their reconciliation ----

test('a broadcast without a receipt in time is unknown, and checkSettlement reconciles it once mined', async (t) => {
  // Its own settlement key, so the transaction it leaves pending blocks no other test.
  const key = generatePrivateKey();
  await sandbox.faucet(privateKeyToAccount(key).address, 1n); // the faucet also gives gas
  const impatient = onV1Wire(new LocalEvmFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: key,
    asset: sandbox.asset,
    eip712: sandbox.eip712,
    receiptTimeoutMs: 200,
    pollingIntervalMs: 20,
  }));
  const payer = await fundedPayer();
  const payment = await pay(payer, requirements());
  const [payerBefore, payToBefore] = await balances(payer.address);

  await sandbox.setAutomine(false); // the transaction will sit in the mempool
  t.after(() => sandbox.setAutomine(true));
  const outcome = await impatient.settle(payment, requirements());
  assert.equal(outcome.status, 'unknown');
  assert.equal(outcome.status === 'unknown' && outcome.reason, 'settlement_receipt_timeout');
  assert.equal(outcome.status === 'unknown' && outcome.payer, payer.address);
  const tx = outcome.status === 'unknown' ? outcome.transaction : '';

  assert.deepEqual(await impatient.checkSettlement(payment, requirements(), tx), {
    status: 'unknown',
    reason: 'settlement_pending',
    payer: payer.address,
    transaction: tx,
  });
  assert.deepEqual(await balances(payer.address), [payerBefore, payToBefore]);

  await sandbox.mine();
  assert.deepEqual(await impatient.checkSettlement(payment, requirements(), tx), {
    status: 'settled',
    transaction: tx,
    payer: payer.address,
  });
  const [payerAfter, payToAfter] = await balances(payer.address);
  assert.equal(payerBefore - payerAfter, 10_000n);
  assert.equal(payToAfter - payToBefore, 10_000n);
});

test('checkSettlement: a nonce consumed by another transaction counts as settled, naming that transaction', async () => {
  const payer = await fundedPayer();
  const payment = await pay(payer, requirements());
  const settled = await facilitator.settle(payment, requirements());
  assert.equal(settled.status, 'settled');

  const lostHash = toHex(randomBytes(32)); // a transaction of ours the chain never saw
  const outcome = await facilitator.checkSettlement(payment, requirements(), lostHash);
  assert.deepEqual(outcome, { status: 'settled', transaction: settled.status === 'settled' && settled.transaction, payer: payer.address });
});

test('checkSettlement: a transaction the node never had is settled anew while the authorization is valid; expired, it failed', async () => {
  const payer = await fundedPayer();
  const lostHash = toHex(randomBytes(32)); // its broadcast was cut: the node never had it, nobody holds its bytes

  const live = await pay(payer, requirements());
  const before = await sandbox.balanceOf(payer.address);
  const anew = await facilitator.checkSettlement(live, requirements(), lostHash);
  assert.equal(anew.status, 'settled');
  assert.notEqual(anew.status === 'settled' && anew.transaction, lostHash);
  assert.equal(await sandbox.balanceOf(payer.address), before - BigInt(PRICE), 'charged once, by the new transaction (its receipt awaited)');
  const again = await facilitator.checkSettlement(live, requirements(), lostHash);
  assert.equal(again.status, 'settled', 'checked again: settled, nothing more moves');
  assert.equal(await sandbox.balanceOf(payer.address), before - BigInt(PRICE));

  await sandbox.mine(); // a block newer than the expiry below
  const expired = await pay(payer, requirements(), { tamper: (a) => void (a.validBefore = String(now() - 5)) });
  const outcome = await facilitator.checkSettlement(expired, requirements(), lostHash);
  assert.equal(outcome.status, 'failed');
  assert.equal(outcome.status === 'failed' && outcome.reason, 'invalid_exact_evm_payload_authorization_valid_before');
});

/** The other valid-looking encoding of an ECDSA signature: s' = n - s, parity flipped. */
function highS(signature: Hex): Hex {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const r = signature.slice(2, 66);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  const flippedS = (n - s).toString(16).padStart(64, '0');
  const flippedV = (v === 27 ? 28 : 27).toString(16);
  return `0x${r}${flippedS}${flippedV}`;
}

test('readiness: the sandbox is ready; a settlement account without gas is reported', async () => {
  assert.deepEqual(await facilitator.readinessProblems(), []);
  const broke = onV1Wire(new LocalEvmFacilitator({
    network: NETWORKS.base as EvmNetwork,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: generatePrivateKey(),
    asset: sandbox.asset,
    eip712: { name: 'USD Coin', version: '2' },
    receiptTimeoutMs: 2_000,
  }));
  const problems = await broke.readinessProblems();
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /^base: settlement account 0x[0-9a-fA-F]{40} has no native gas/);
});

// ---- settlement batching ----

/** A key's nonces whose first send waits until the test opens the gate, so later settlements queue up. */
function gatedNonces() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const state = { entered: false, open };
  const nonces = (pendingCount: PendingCount): NonceAllocator => {
    const inner = new ProcessNonces(pendingCount);
    return {
      async withNextNonce<T>(use: (nonce: number) => Promise<NonceUse<T>>): Promise<T> {
        state.entered = true;
        await gate;
        return inner.withNextNonce(use);
      },
    };
  };
  return { state, nonces };
}

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 2_000) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('batching: settlements queued behind a send go out in one Multicall3 transaction; a used and an unfunded authorization fail alone, the others settle, balances exact', async () => {
  const key = generatePrivateKey();
  await sandbox.faucet(privateKeyToAccount(key).address, 1n); // the faucet also gives gas
  const { state, nonces } = gatedNonces();
  const batching = new LocalEvmFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: key,
    asset: sandbox.asset,
    eip712: sandbox.eip712,
    receiptTimeoutMs: 5_000,
    pollingIntervalMs: 20,
    nonces,
    batchSettlements: true,
  });
  const [lone, good1, good2, reused, unfunded] = await Promise.all(Array.from({ length: 5 }, () => fundedPayer()));
  const requirement = requirementOf(requirements());
  const proofs = await Promise.all([lone, good1, good2, reused, unfunded].map(async (payer) => proofOf(await pay(payer!, requirements()))));
  for (const proof of proofs) assert.equal((await batching.verify(proof, requirement)).isValid, true);

  // Between verify and settle, two go bad in ways only the chain sees: one authorization is used by
  // someone else's transaction, one payer moves its funds away.
  const chainClient = { chain: sandbox.chain, transport: http(sandbox.rpcUrl) };
  const chain = createPublicClient({ ...chainClient, pollingInterval: 20 });
  const outsider = await fundedPayer();
  const { authorization: a, signature } = proofs[3]!.payload as { authorization: Record<string, string>; signature: Hex };
  const { r, s, v } = parseSignature(signature);
  const frontRun = await createWalletClient({ ...chainClient, account: outsider }).sendTransaction({
    to: sandbox.asset,
    data: encodeFunctionData({
      abi: eip3009Abi,
      functionName: 'transferWithAuthorization',
      args: [a.from as Address, a.to as Address, BigInt(a.value!), BigInt(a.validAfter!), BigInt(a.validBefore!), a.nonce as Hex, Number(v), r, s],
    }),
  });
  assert.equal((await chain.waitForTransactionReceipt({ hash: frontRun })).status, 'success');
  const drain = await createWalletClient({ ...chainClient, account: unfunded! }).writeContract({
    address: sandbox.asset,
    abi: parseAbi(['function transfer(address to, uint256 value) returns (bool)']),
    functionName: 'transfer',
    args: [randomAddress(), await sandbox.balanceOf(unfunded!.address)],
  });
  assert.equal((await chain.waitForTransactionReceipt({ hash: drain })).status, 'success');

  const payers = [lone, good1, good2, reused, unfunded].map((p) => p!.address);
  const before = await Promise.all([...payers, sandbox.payTo].map((address) => sandbox.balanceOf(address)));

  // The first settlement holds the key's ordered section; the other four queue behind it.
  const first = batching.settle(proofs[0]!, requirement);
  await until('the first send reached the nonce', () => state.entered);
  const rest = proofs.slice(1).map((proof) => batching.settle(proof, requirement));
  await until('four settlements wait for the next transaction', () => batching.settlementsWaiting === 4);
  state.open();
  const [loneOutcome, ...outcomes] = await Promise.all([first, ...rest]);

  assert.equal(loneOutcome!.status, 'settled');
  const loneHash = loneOutcome!.status === 'settled' ? (loneOutcome!.transaction as Hex) : '0x';
  assert.equal((await chain.getTransaction({ hash: loneHash })).to, sandbox.asset.toLowerCase(), 'a lone settlement goes straight to the token');
  const batchHash = outcomes[0]!.status === 'settled' ? (outcomes[0]!.transaction as Hex) : '0x';
  assert.deepEqual(outcomes, [
    { status: 'settled', transaction: batchHash, payer: good1!.address },
    { status: 'settled', transaction: batchHash, payer: good2!.address },
    { status: 'failed', reason: 'invalid_transaction_state', payer: reused!.address, transaction: batchHash },
    { status: 'failed', reason: 'invalid_transaction_state', payer: unfunded!.address, transaction: batchHash },
  ]);
  assert.equal((await chain.getTransaction({ hash: batchHash })).to, MULTICALL3_ADDRESS.toLowerCase());

  const after = await Promise.all([...payers, sandbox.payTo].map((address) => sandbox.balanceOf(address)));
  const moved = before.map((value, i) => value - after[i]!);
  const price = 10_000n;
  assert.deepEqual(moved, [price, price, price, 0n, 0n, -3n * price], 'three paid, the spoiled two moved nothing');

  // Reconciliation reads each payment's own outcome out of the shared batch transaction.
  assert.deepEqual(await batching.checkSettlement(proofs[1]!, requirement, batchHash), { status: 'settled', transaction: batchHash, payer: good1!.address });
  assert.deepEqual(await batching.checkSettlement(proofs[4]!, requirement, batchHash), {
    status: 'failed',
    reason: 'invalid_transaction_state',
    payer: unfunded!.address,
    transaction: batchHash,
  });
  // not in our batch, but its authorization was used by the outsider's transaction: settled, by that one
  assert.deepEqual(await batching.checkSettlement(proofs[3]!, requirement, batchHash), { status: 'settled', transaction: frontRun, payer: reused!.address });
});

test('readiness: batching on a chain without Multicall3 is reported', async () => {
  const testClient = createTestClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), mode: 'anvil' });
  const code = await createPublicClient({ transport: http(sandbox.rpcUrl) }).getCode({ address: MULTICALL3_ADDRESS });
  assert.ok(code, 'the sandbox places Multicall3');
  const batching = new LocalEvmFacilitator({
    network: base,
    rpcUrl: sandbox.rpcUrl,
    settlementPrivateKey: sandbox.settlementPrivateKey,
    asset: sandbox.asset,
    eip712: sandbox.eip712,
    receiptTimeoutMs: 2_000,
    batchSettlements: true,
  });
  assert.deepEqual(await batching.readinessProblems(), []);
  await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: '0x' });
  try {
    assert.deepEqual(await batching.readinessProblems(), [`base: settlement batching is on but there is no Multicall3 at ${MULTICALL3_ADDRESS}`]);
  } finally {
    await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: code });
  }
});
