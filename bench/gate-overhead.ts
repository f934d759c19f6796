// Child process of the bench: the PaymentGate's own cost per paid request, measured in-process.
// A real gate (src/payments/gate.ts) over a real sandbox chain (anvil + TestUSDC), a real SQLite ledger,
// the real image endpoint (preview renderer, 256x256, n=1) as the work, and real settlement. The
// facilitator, the ledger and the work are wrapped only to take timestamps, so each paid call splits into:
//   decode+match = handle() entry -> ledger.reserve() start (header decode, zod parse, requirement, identify)
//   reserve      = ledger.reserve()
//   verify       = facilitator.verify() (EIP-712 recovery, authorizationState+balanceOf reads, simulate)
//   pre-work     = handle() entry -> work() start (all of the above + transition to 'verified')
//   gate total   = handle() duration - work - settle (pre-work + the 'pending'/'settled' transitions + receipt)
// Calls run one at a time (no queueing). Prints one JSON line on stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { loadConfig } from '../src/config/load.ts';
import { SqliteLedger } from '../src/store/sqlite-ledger.ts';
import { FileMediaStore } from '../src/media/file-media-store.ts';
import { PaymentGate, type PaidCall } from '../src/payments/gate.ts';
import { HTTP_NAMES, HttpPaymentAnswers, paymentFromHeaders } from '../src/http/paid/payment-edge.ts';
import type { Facilitator } from '../src/payments/facilitator.ts';
import type { PaymentRail } from '../src/payments/rails.ts';
import type { Ledger, NewPayment, PaymentState, PaymentUpdate } from '../src/store/ledger.ts';
import { startSandbox } from '../src/sandbox/sandbox.ts';
import { ModelCatalog } from '../src/providers/catalog.ts';
import { ProviderRegistry } from '../src/providers/registry.ts';
import { createLocalEngines } from '../src/providers/local/index.ts';
import { imagesEndpoint } from '../src/api/images.ts';
import { bodyFieldsOf } from '../src/http/discovery/openapi.ts';
import { paidCall } from '../src/payments/paid-call.ts';
import { requestHash } from '../src/lib/canonical-json.ts';
import { PAID_OPERATIONS } from '../src/http/paid/operations.ts';
import { specErrorShape } from '../src/http/render-error.ts';
import { decodeHeader } from '../src/x402/encoding.ts';
import { transferWithAuthorizationTypes } from '../src/payments/facilitators/evm/eip3009-abi.ts';
import type { NetworkName } from '../src/x402/networks.ts';
import { stats } from './load.ts';
import { signProof, type PaymentRequired } from './sign.ts';

const iterations = Number(process.env.BENCH_GATE_ITERATIONS ?? 100);
const warmup = Number(process.env.BENCH_GATE_WARMUP ?? 10);
const NETWORK: NetworkName = 'base';
const BODY = { prompt: 'a lighthouse at dusk', n: 1, size: '256x256' };

const dataDir = mkdtempSync(join(tmpdir(), 'x402-bench-gate-'));
const config = loadConfig({}, { host: '127.0.0.1', port: 0, dataDir, logLevel: 'silent', sandbox: { enabled: true, networks: [NETWORK] } });
const log = pino({ level: 'silent' });
const sandbox = await startSandbox([NETWORK], config.settlementTimeoutMs);
const ledger = new SqliteLedger(join(dataDir, 'ledger.db'));
const media = new FileMediaStore(join(dataDir, 'media'));

try {
  const chain = sandbox.chains.get(NETWORK)!;
  const rail = chain.rail;
  let marks: Record<string, number> = {};
  let transitionMs = 0;
  const timed = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    marks[`${name}Start`] = performance.now();
    try {
      return await run();
    } finally {
      marks[`${name}End`] = performance.now();
    }
  };
  const facilitator: Facilitator = {
    requirementExtra: () => rail.facilitator.requirementExtra(),
    verify: (payload, requirements) => timed('verify', () => rail.facilitator.verify(payload, requirements)),
    settle: (payload, requirements) => timed('settle', () => rail.facilitator.settle(payload, requirements)),
    checkSettlement: (payload, requirements, tx) => rail.facilitator.checkSettlement(payload, requirements, tx),
  };
  // Only reserve and transition are timed; every other Ledger method passes straight through.
  const timedLedger = new Proxy(ledger as Ledger, {
    get(target, property, receiver) {
      if (property === 'reserve') return (payment: NewPayment) => timed('reserve', () => target.reserve(payment));
      if (property === 'transition') {
        return async (key: string, from: PaymentState[], update: PaymentUpdate) => {
          const started = performance.now();
          try {
            return await target.transition(key, from, update);
          } finally {
            transitionMs += performance.now() - started;
          }
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const timedRail: PaymentRail = { ...rail, facilitator };
  const gate = new PaymentGate({ rails: new Map([[NETWORK, timedRail]]), ledger: timedLedger, media, log });

  const catalog = new ModelCatalog(config.models, config.defaults);
  const providers = new ProviderRegistry(config, createLocalEngines(config));
  const origin = 'http://127.0.0.1:4021';
  const context = { catalog, providers, media, mediaUrl: (id: string) => `${origin}/media/${id}` };
  const bodyFields = bodyFieldsOf(imagesEndpoint);
  const answers = new HttpPaymentAnswers(gate);
  const operation = PAID_OPERATIONS.find((candidate) => candidate.capability === 'image')!;
  const makeCall = (paymentHeader: string | undefined): PaidCall => {
    const prepared = imagesEndpoint.prepare(BODY, context);
    const facts = {
      payment: paymentFromHeaders((name) => (name === 'X-PAYMENT' ? paymentHeader : undefined)),
      network: NETWORK,
      names: HTTP_NAMES,
      resource: `${origin}${imagesEndpoint.path}`,
      listing: { extensions: {} },
      binding: { route: imagesEndpoint.path, body: BODY },
    };
    return paidCall(config, operation, facts, { model: prepared.model.id, amount: prepared.amount, work: () => timed('work', () => prepared.run()) });
  };

  // The 402 a client would receive, and one funded buyer.
  const unpaid = makeCall(undefined);
  const quote = answers.render(await gate.process(unpaid), unpaid, { bodyFields, errorShape: specErrorShape });
  // the gate hands 402 bodies over already serialised
  const required = (typeof quote.body === 'string' ? JSON.parse(quote.body) : quote.body) as PaymentRequired;
  const buyerKey = generatePrivateKey();
  const buyer = privateKeyToAccount(buyerKey);
  await chain.faucet(buyer.address);

  // Pre-signed proofs (signing is the client's cost, not the gate's).
  const total = warmup + iterations;
  const signStarted = performance.now();
  const proofs: string[] = [];
  for (let i = 0; i < total; i++) proofs.push(await signProof(buyer, required));
  const signMs = (performance.now() - signStarted) / total;

  // Standalone EIP-712 signature recovery, the CPU-bound step inside verify (and again inside settle).
  if (rail.network.family !== 'evm') throw new Error(`${NETWORK} is not an EVM network`);
  const domain = { ...(rail.extra as { name: string; version: string }), chainId: rail.network.chainId, verifyingContract: rail.asset as Address };
  const recoverSamples: number[] = [];
  for (const proof of proofs.slice(0, Math.min(total, 100))) {
    const { payload } = decodeHeader(proof) as { payload: { signature: Hex; authorization: Record<string, string> } };
    const a = payload.authorization;
    const message = {
      from: a.from as Address,
      to: a.to as Address,
      value: BigInt(a.value!),
      validAfter: BigInt(a.validAfter!),
      validBefore: BigInt(a.validBefore!),
      nonce: a.nonce as Hex,
    };
    const started = performance.now();
    await recoverTypedDataAddress({ domain, types: transferWithAuthorizationTypes, primaryType: 'TransferWithAuthorization', message, signature: payload.signature });
    recoverSamples.push(performance.now() - started);
  }

  const series: Record<string, number[]> = {
    prepare: [], decodeMatch: [], reserve: [], verify: [], preWork: [], transitions: [], gateTotal: [], work: [], settle: [], total: [],
  };
  let failures = 0;
  for (let i = 0; i < total; i++) {
    const call = makeCall(proofs[i]);
    marks = {};
    transitionMs = 0;
    const t0 = performance.now();
    const outcome = await gate.process(call);
    const end = performance.now();
    if (outcome.kind !== 'delivered') {
      failures++;
      continue;
    }
    if (i < warmup) continue;
    const m = marks as Record<string, number>;
    const work = m.workEnd! - m.workStart!;
    const settle = m.settleEnd! - m.settleStart!;
    series.decodeMatch!.push(m.reserveStart! - t0);
    series.reserve!.push(m.reserveEnd! - m.reserveStart!);
    series.verify!.push(m.verifyEnd! - m.verifyStart!);
    series.preWork!.push(m.workStart! - t0);
    series.transitions!.push(transitionMs);
    series.gateTotal!.push(end - t0 - work - settle);
    series.work!.push(work);
    series.settle!.push(settle);
    series.total!.push(end - t0);
  }

  // endpoint.prepare (zod parse + quote) + requestHash: HTTP-layer work before the gate, for scale.
  const prepareSamples: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const started = performance.now();
    imagesEndpoint.prepare(BODY, context);
    requestHash(imagesEndpoint.path, BODY);
    prepareSamples.push(performance.now() - started);
  }
  series.prepare = prepareSamples;

  const result = {
    iterations,
    warmup,
    failures,
    signMsPerProof: signMs,
    recover: stats(recoverSamples),
    pieces: Object.fromEntries(Object.entries(series).map(([name, samples]) => [name, stats(samples)])),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await sandbox.stop();
  await ledger.close();
  rmSync(dataDir, { recursive: true, force: true });
}
