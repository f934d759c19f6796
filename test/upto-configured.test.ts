// `upto` on networks from a config file, as a live deployment runs (no sandbox mode): local anvil chains stand in
// for base and polygon, with the real Permit2 and the upto proxy where a test wants them and none where it does
// not. The unmodified official client (@x402/fetch + @x402/evm's UptoEvmScheme) pays; balances are read on-chain.
// Covers: a local facilitator offering upto where the contracts have code (same key and nonce sequence as exact),
// exact alone without the contracts or with `upto: "off"`, a remote official facilitator settling upto through
// the gateway, the readiness probe, and settings that cannot be honoured stopping startup in one message.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, createTestClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startEvmSandbox, type EvmSandbox } from '../src/sandbox/evm/evm-sandbox.ts';
import { BATCH_SETTLEMENT_CONTRACT } from '../src/x402/batch-settlement.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import { ConfigError, loadConfig } from '../src/config/load.ts';
import { configuredRails } from '../src/payments/configured-rails.ts';
import { startService, type RunningService } from '../src/service.ts';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from '../src/x402/upto.ts';
import { EIP2612_GAS_SPONSORING, gasSponsoringDeclarations } from '../src/x402/gas-sponsoring.ts';
import { RemoteFacilitator } from '../src/payments/facilitators/remote.ts';
import { requirementFromStored } from '../src/x402/model.ts';
import { LocalEvmFacilitator } from '../src/payments/facilitators/evm/local-evm.ts';
import { LocalEvmUptoFacilitator } from '../src/payments/facilitators/evm/local-evm-upto.ts';
import { startFacilitatorServer } from './support/facilitator-server.ts';
import { startOfficialUptoFacilitator, type OfficialUptoFacilitator } from './support/official-upto-facilitator.ts';
import { postJson } from './support/service.ts';
import { signUptoPayment } from './support/upto-client.ts';
import { decodeHeader as decode } from './support/sandbox-wallet.ts';

// a short answer under a large budget: the ceiling is priced on max_tokens, the charge on what was generated
const CHAT = { model: 'local/demo-bigram', prompt: 'Tell me about the sea', max_tokens: 128, options: { seed: 7 } };
const CHAT_URL = '/api/v1/ai/chat';

let base: EvmSandbox; // Permit2 and the proxy present
let polygonBare: EvmSandbox; // Permit2 and the proxy removed
let polygon: EvmSandbox; // present, but the config says upto "off"
let official: OfficialUptoFacilitator;
let local: RunningService; // base (local facilitator, upto auto) + polygon (local, no contracts, auto)
let remote: RunningService; // base (remote official facilitator, upto auto) + polygon (local, upto off)
const dirs: string[] = [];

/** Starts a gateway as an operator does: a config file named by CONFIG_FILE, secrets in the environment. */
async function gatewayFromFile(networks: Record<string, unknown>): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), 'x402-upto-live-'));
  dirs.push(dir);
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ port: 0, dataDir: join(dir, 'data'), logLevel: 'silent', networks }));
  return startService(loadConfig({ CONFIG_FILE: file }));
}

const localFacilitator = (chain: EvmSandbox, keyEnv: string) => ({ type: 'local', rpcUrl: chain.rpcUrl, secretKeyEnv: keyEnv });

before(async () => {
  [base, polygonBare, polygon] = await Promise.all([
    startEvmSandbox(NETWORKS.base as EvmNetwork),
    startEvmSandbox(NETWORKS.polygon as EvmNetwork),
    startEvmSandbox(NETWORKS.polygon as EvmNetwork),
  ]);
  const bare = createTestClient({ transport: http(polygonBare.rpcUrl), mode: 'anvil' });
  // a bare chain: no upto contracts, and no batch-settlement escrow either (channels "auto" finds none)
  for (const address of [PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS, BATCH_SETTLEMENT_CONTRACT]) await bare.setCode({ address, bytecode: '0x' });

  const officialKey = generatePrivateKey();
  await base.faucet(privateKeyToAccount(officialKey).address, 1n); // its gas for settlements (and 1 atomic unit of USDC)
  official = await startOfficialUptoFacilitator({ rpcUrl: base.rpcUrl, chainId: base.chainId, privateKey: officialKey });

  // the same settlement key settles exact and upto
  process.env.UPTO_TEST_BASE_KEY = base.settlementPrivateKey;
  process.env.UPTO_TEST_POLYGON_BARE_KEY = polygonBare.settlementPrivateKey;
  process.env.UPTO_TEST_POLYGON_KEY = polygon.settlementPrivateKey;
  local = await gatewayFromFile({
    base: { payTo: base.payTo, facilitator: localFacilitator(base, 'UPTO_TEST_BASE_KEY') },
    polygon: { payTo: polygonBare.payTo, facilitator: localFacilitator(polygonBare, 'UPTO_TEST_POLYGON_BARE_KEY'), authCapture: 'off' },
  });
  remote = await gatewayFromFile({
    base: { payTo: base.payTo, facilitator: { type: 'remote', url: official.url, timeoutMs: 20_000 } },
    polygon: { payTo: polygon.payTo, facilitator: localFacilitator(polygon, 'UPTO_TEST_POLYGON_KEY'), upto: 'off', channels: 'off', authCapture: 'off' },
  });
});

after(async () => {
  await Promise.all([local?.stop(), remote?.stop()]);
  await official?.stop();
  await Promise.all([base?.stop(), polygonBare?.stop(), polygon?.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});


async function quote(gateway: RunningService, network: string): Promise<{ accepts: any[]; extensions?: Record<string, unknown> }> {
  const response = await postJson(`${gateway.url}${CHAT_URL}`, CHAT, { 'X-Network': network });
  assert.equal(response.status, 402);
  await response.arrayBuffer();
  return decode(response.headers.get('PAYMENT-REQUIRED'));
}

async function buyer(chain: EvmSandbox, options: { eth: boolean } = { eth: true }): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(account.address, 10_000_000n);
  if (!options.eth) await createTestClient({ transport: http(chain.rpcUrl), mode: 'anvil' }).setBalance({ address: account.address, value: 0n });
  return account;
}

function uptoClient(chain: EvmSandbox, account: PrivateKeyAccount): x402Client {
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(chain.rpcUrl) }));
  return new x402Client().register(`eip155:${chain.chainId}`, new UptoEvmScheme(signer, { rpcUrl: chain.rpcUrl }));
}

function payChat(gateway: RunningService, client: x402Client, network: string): Promise<Response> {
  return wrapFetchWithPayment(fetch, client)(`${gateway.url}${CHAT_URL}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': network },
    body: JSON.stringify(CHAT),
  });
}

/** Pays a chat under upto and checks the charge is below the ceiling and is exactly what moved on-chain. */
async function paysBelowCeiling(gateway: RunningService, chain: EvmSandbox, account: PrivateKeyAccount): Promise<bigint> {
  const ceiling = BigInt((await quote(gateway, 'base')).accepts[1].amount);
  const [buyerBefore, payToBefore] = await Promise.all([chain.balanceOf(account.address), chain.balanceOf(chain.payTo)]);
  const response = await payChat(gateway, uptoClient(chain, account), 'base');
  assert.equal(response.status, 200, await response.clone().text());
  await response.arrayBuffer();
  const receipt = decode(response.headers.get('PAYMENT-RESPONSE'));
  assert.equal(receipt.success, true);
  assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/);
  const charged = BigInt(receipt.amount);
  assert.ok(charged > 0n && charged < ceiling, `charged ${charged} below the ceiling ${ceiling}`);
  assert.equal(await chain.balanceOf(account.address), buyerBefore - charged);
  assert.equal(await chain.balanceOf(chain.payTo), payToBefore + charged);
  return charged;
}

test('a configured network whose chain has Permit2 and the proxy offers upto, settled from the exact key', async () => {
  const offer = await quote(local, 'base');
  // payment channels and auth-capture too: their escrows are on the chain ("auto")
  assert.deepEqual(offer.accepts.map((a) => a.scheme), ['exact', 'upto', 'batch-settlement', 'auth-capture']);
  const [exact, upto] = offer.accepts;
  assert.equal(upto.amount, exact.amount, 'the ceiling is the exact quote');
  assert.equal(upto.extra.assetTransferMethod, 'permit2');
  assert.equal(upto.extra.facilitatorAddress, base.settlementAddress, 'the witness names the exact settlement key');
  assert.ok(offer.extensions?.eip2612GasSponsoring && offer.extensions.erc20ApprovalGasSponsoring);

  await paysBelowCeiling(local, base, await buyer(base));
});

test('a buyer with USDC and no ETH pays a configured network under upto (EIP-2612 sponsored)', async () => {
  const account = await buyer(base, { eth: false });
  await paysBelowCeiling(local, base, account);
  assert.equal(await createPublicClient({ transport: http(base.rpcUrl) }).getBalance({ address: account.address }), 0n);
});

test('exact and upto settle from the one key through one sender (one nonce sequence): concurrent payments of both all land', async () => {
  const rail = local.rails.get('base')!;
  assert.ok(rail.facilitator instanceof LocalEvmFacilitator && rail.upto?.facilitator instanceof LocalEvmUptoFacilitator);
  assert.equal(rail.upto.facilitator.sender, rail.facilitator.sender, 'the same EvmSender object');

  const price = BigInt((await quote(local, 'base')).accepts[0].amount);
  const buyers = await Promise.all([0, 1, 2, 3].map(() => buyer(base)));
  const before = await Promise.all(buyers.map((account) => base.balanceOf(account.address)));
  const responses = await Promise.all(
    buyers.map((account, i) =>
      payChat(local, i % 2 === 0 ? uptoClient(base, account) : registerExactEvmScheme(new x402Client(), { signer: account }), 'base'),
    ),
  );
  for (const [i, response] of responses.entries()) {
    assert.equal(response.status, 200, await response.clone().text());
    await response.arrayBuffer();
    const charged = BigInt(decode(response.headers.get('PAYMENT-RESPONSE')).amount);
    assert.equal(await base.balanceOf(buyers[i]!.address), before[i]! - charged);
    if (i % 2 === 1) assert.equal(charged, price, 'exact is charged its price');
    else assert.ok(charged < price, 'upto is charged its tokens');
  }
});

test('without Permit2 and the proxy on the chain, or with upto "off", a configured network offers exact alone', async () => {
  const bare = await quote(local, 'polygon');
  assert.deepEqual(bare.accepts.map((a) => a.scheme), ['exact']);
  assert.equal(bare.extensions?.eip2612GasSponsoring, undefined);

  const code = await createPublicClient({ transport: http(polygon.rpcUrl) }).getCode({ address: UPTO_PROXY_ADDRESS });
  assert.ok(code && code.length > 2, 'the contracts are there: only the setting turns upto off');
  assert.deepEqual((await quote(remote, 'polygon')).accepts.map((a) => a.scheme), ['exact']);

  // and an upto proof for it is refused before anything is verified or charged
  const account = await buyer(polygonBare);
  const signed = await signUptoPayment(account, polygonBare.rpcUrl, {
    caip2: 'eip155:137',
    asset: polygonBare.asset,
    payTo: polygonBare.payTo,
    ceiling: BigInt(bare.accepts[0].amount),
    facilitatorAddress: polygonBare.settlementAddress,
    eip712: polygonBare.eip712,
  });
  const header = Buffer.from(JSON.stringify({ x402Version: 2, accepted: signed.requirements, payload: signed.payload })).toString('base64');
  const response = await postJson(`${local.url}${CHAT_URL}`, CHAT, { 'X-Network': 'polygon', 'PAYMENT-SIGNATURE': header });
  assert.equal(response.status, 402);
  assert.match(decode(response.headers.get('PAYMENT-REQUIRED')).error, /unsupported_scheme: upto/);
  assert.equal(await polygonBare.balanceOf(account.address), 10_000_000n);
});

test('a remote official facilitator listing upto in /supported settles an upto payment through the gateway: the metered amount', async () => {
  const offer = await quote(remote, 'base');
  assert.deepEqual(offer.accepts.map((a) => a.scheme), ['exact', 'upto']);
  assert.equal(offer.accepts[1].extra.facilitatorAddress, official.address, "the witness names the remote facilitator's key");
  assert.ok(offer.extensions?.eip2612GasSponsoring, 'declared: /supported lists it');
  assert.equal(offer.extensions?.erc20ApprovalGasSponsoring, undefined, 'not declared: /supported does not list it');

  const settlesBefore = official.settledAmounts.length;
  const charged = await paysBelowCeiling(remote, base, await buyer(base, { eth: false }));
  assert.deepEqual(official.settledAmounts.slice(settlesBefore), [charged.toString()], 'one /settle, for the metered amount');
});

test('through the remote: a charge above the ceiling is refused with its reason, a zero charge settles without a transaction', async () => {
  const account = await buyer(base, { eth: false });
  const ceiling = 50_000n;
  const offer = { caip2: 'eip155:8453', asset: base.asset, payTo: base.payTo, ceiling, facilitatorAddress: official.address, eip712: base.eip712 };
  const signed = await signUptoPayment(account, base.rpcUrl, offer, gasSponsoringDeclarations([EIP2612_GAS_SPONSORING]));
  const proof = { scheme: 'upto', network: 'base' as const, payload: signed.payload, wire: 2 as const, ...(signed.extensions ? { extensions: signed.extensions } : {}) };
  const requirement = { ...requirementFromStored(signed.requirements)!, network: 'base' as const };
  const uptoRemote = new RemoteFacilitator({ url: official.url, network: NETWORKS.base, timeoutMs: 20_000, scheme: 'upto' });

  assert.deepEqual(await uptoRemote.verify(proof, requirement), { isValid: true, payer: account.address });
  const above = await uptoRemote.settle(proof, requirement, ceiling + 1n);
  assert.equal(above.status, 'failed');
  assert.equal(above.status === 'failed' && above.reason, 'invalid_upto_evm_payload_settlement_exceeds_amount');
  assert.deepEqual(await uptoRemote.settle(proof, requirement, 0n), { status: 'settled', transaction: '', payer: account.address });
  assert.equal(await base.balanceOf(account.address), 10_000_000n, 'nothing moved');
});

test('/readyz probes the upto contracts: their code gone is degraded, not a 503 (exact still pays)', async () => {
  const ready = await fetch(`${local.url}/readyz`);
  const report = (await ready.json()) as { status: string; upto: Record<string, { status: string; latencyMs: number; error?: string }>; degraded: string[] };
  assert.equal(ready.status, 200, JSON.stringify(report));
  assert.deepEqual(Object.keys(report.upto), ['base'], 'only rails offering upto are probed');
  assert.equal(report.upto.base!.status, 'ok');
  assert.equal(typeof report.upto.base!.latencyMs, 'number');
  assert.deepEqual(report.degraded, []);

  const chain = createTestClient({ transport: http(base.rpcUrl), mode: 'anvil' });
  const proxyCode = (await createPublicClient({ transport: http(base.rpcUrl) }).getCode({ address: UPTO_PROXY_ADDRESS })) as Hex;
  await chain.setCode({ address: UPTO_PROXY_ADDRESS, bytecode: '0x' });
  try {
    const degraded = await fetch(`${local.url}/readyz`);
    const after = (await degraded.json()) as typeof report;
    assert.equal(degraded.status, 200, JSON.stringify(after));
    assert.equal(after.status, 'ready');
    assert.equal(after.upto.base!.status, 'down');
    assert.match(after.upto.base!.error!, new RegExp(`the upto proxy \\(${UPTO_PROXY_ADDRESS}\\)`));
    assert.deepEqual(after.degraded, ['upto:base']);
  } finally {
    await chain.setCode({ address: UPTO_PROXY_ADDRESS, bytecode: proxyCode });
  }
});

test('upto settings that cannot be honoured stop startup, each named in the one message', async () => {
  // a facilitator whose /supported lists exact only, asked for upto "on"
  const exactOnly = await startFacilitatorServer(
    'base',
    new LocalEvmFacilitator({
      network: NETWORKS.base as EvmNetwork,
      rpcUrl: base.rpcUrl,
      settlementPrivateKey: base.settlementPrivateKey,
      asset: base.asset,
      eip712: base.eip712,
      receiptTimeoutMs: 10_000,
    }),
    { versions: [1, 2] },
  );
  try {
    const config = loadConfig(
      {},
      {
        networks: {
          base: { payTo: base.payTo, facilitator: { type: 'remote', url: exactOnly.url }, upto: 'on' },
          polygon: { payTo: polygon.payTo, facilitator: localFacilitator(polygon, 'UPTO_TEST_UNSET_KEY') },
        },
      },
    );
    await assert.rejects(configuredRails(config, { UPTO_TEST_POLYGON_KEY: polygon.settlementPrivateKey }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /\(2 problems\)/);
      assert.match(error.message, /networks\.base: upto is "on" but the remote facilitator cannot settle it: its \/supported lists no upto kind/);
      assert.match(error.message, /networks\.polygon: .*UPTO_TEST_UNSET_KEY/);
      return true;
    });
  } finally {
    await exactOnly.stop();
  }
  assert.throws(
    () => loadConfig({}, { networks: { solana: { payTo: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', facilitator: localFacilitator(base, 'K'), upto: 'on' } } }),
    /networks\.solana\.upto "on": upto is offered on EVM networks only/,
  );
});
