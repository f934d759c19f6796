// GET /readyz: can a paid call be served right now? Each dependency is probed (each chain's RPC or remote
// facilitator, the ledger, the media store, each upstream provider) with its status and latency. /healthz
// stays liveness only. 503 when some paid route cannot be served: the ledger or media store is down, no
// chain answers, or every provider behind one capability is down.
// Each network's payment findings count too (asset contract code, settlement gas, Solana fee payer and payTo token
// account: payments/readiness.ts checks them at startup and every readinessCheckIntervalMs, and this reads the
// last findings, never the chain): a network with a finding is not usable, and with no usable network left the
// paid routes are unavailable (503). One not-ready network beside a usable one is `degraded` ("payments:<network>").
// Each rail's offer of a scheme beside exact is probed too (upto: Permit2 and the upto proxy still have code, or a
// remote facilitator still lists upto; channels and auth-capture: their escrow still has code). Its failure is not
// a 503: the call is still paid under `exact` there, and such a proof is refused at verification without a charge.
// It is `degraded` instead ("upto:<network>", "channels:<network>", "auth-capture:<network>").
import type { Config } from '../config/load.ts';
import type { Capability } from '../config/schema.ts';
import type { Ledger } from '../store/ledger.ts';
import type { MediaStore } from '../media/media-store.ts';
import { NETWORKS, type NetworkName } from '../x402/networks.ts';
import { SCHEMES_BESIDE_EXACT, type PaymentRail, type PaymentRails, type SchemeOffer } from '../payments/rails.ts';
import type { NetworkFindings } from '../payments/readiness.ts';
import { rpcFetch } from '../payments/facilitators/rpc-fetch.ts';

const PROBE_TIMEOUT_MS = 3_000;

export interface CheckResult {
  status: 'ok' | 'down';
  latencyMs: number;
  /** why it is down, in words; never a URL's credentials or a secret */
  error?: string;
}

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  chains: Record<string, CheckResult>;
  ledger: CheckResult;
  media: CheckResult;
  providers: Record<string, CheckResult>;
  /** per network offering upto: can upto still be paid there */
  upto: Record<string, CheckResult>;
  /** per network offering payment channels: the escrow and its deposit collectors still have code */
  channels: Record<string, CheckResult>;
  /** per network offering auth-capture: Commerce Payments' escrow and its ERC-3009 collector still have code */
  authCapture: Record<string, CheckResult>;
  /** per network: what its last payment readiness check found (empty problems: ready) */
  payments: Record<string, PaymentFindings>;
  /** paid routes that cannot be served now, by capability */
  unavailable: Capability[];
  /** what works less well without stopping a route: "upto:<network>", "channels:<network>", "auth-capture:<network>" where they are down (exact still pays) */
  degraded: string[];
}

export interface PaymentFindings {
  status: 'ok' | 'down';
  /** what would make a payment there fail, in words an operator can act on */
  problems: string[];
  /** when the findings were established (ISO 8601); null before the first check completed */
  checkedAt: string | null;
  /** why the last check could not run (the findings before it are kept) */
  uncheckedReason?: string;
}

export interface ReadinessDeps {
  config: Config;
  ledger: Ledger;
  media: MediaStore;
  /** JSON-RPC URLs of the sandbox chains, which have no entry in config.networks */
  sandboxRpcUrls: ReadonlyMap<NetworkName, string>;
  /** the rails, for the checks of their offers beside exact */
  rails?: PaymentRails;
  /** each network's last payment readiness findings */
  payments?: { findings(): ReadonlyMap<NetworkName, NetworkFindings> };
}

function paymentFindings(found: NetworkFindings | undefined): PaymentFindings {
  if (!found) return { status: 'ok', problems: [], checkedAt: null };
  return {
    status: found.problems.length === 0 ? 'ok' : 'down',
    problems: found.problems,
    checkedAt: found.checkedAt === undefined ? null : new Date(found.checkedAt).toISOString(),
    ...(found.uncheckedReason ? { uncheckedReason: found.uncheckedReason } : {}),
  };
}

async function timed(probe: (signal: AbortSignal) => Promise<void>): Promise<CheckResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    await Promise.race([
      probe(signal),
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(`no answer in ${PROBE_TIMEOUT_MS} ms`)), { once: true })),
    ]);
    return { status: 'ok', latencyMs: elapsed(started) };
  } catch (error) {
    return { status: 'down', latencyMs: elapsed(started), error: reasonOf(error) };
  }
}

const elapsed = (started: number) => +(performance.now() - started).toFixed(1);

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const text = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return text.split('\n')[0]!.slice(0, 200);
}

async function jsonRpc(url: string, method: string, signal: AbortSignal): Promise<void> {
  const response = await rpcFetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    signal,
  });
  const answer = (await response.json().catch(() => undefined)) as { result?: unknown; error?: { message?: string } } | undefined;
  if (!response.ok || !answer || answer.result === undefined) throw new Error(answer?.error?.message ?? `HTTP ${response.status}`);
}

/** Reachable when the server answers HTTP at all (an API key problem is not an outage of the route). */
async function httpAnswers(url: string, signal: AbortSignal): Promise<void> {
  const response = await rpcFetch(url, { signal, redirect: 'manual' });
  await response.body?.cancel();
  if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
}

function chainProbe(deps: ReadinessDeps, name: NetworkName): (signal: AbortSignal) => Promise<void> {
  const family = NETWORKS[name].family;
  const facilitator = deps.config.networks[name]?.facilitator;
  if (facilitator?.type === 'remote') return (signal) => httpAnswers(`${facilitator.url.replace(/\/+$/, '')}/supported`, signal);
  const rpcUrl = facilitator?.rpcUrl ?? deps.sandboxRpcUrls.get(name)!;
  return (signal) => jsonRpc(rpcUrl, family === 'evm' ? 'eth_chainId' : 'getHealth', signal);
}

/** Each offer of one kind on these networks, checked: its results by network, and the networks where it is down. */
async function checkOffers(rails: PaymentRails | undefined, networks: readonly NetworkName[], of: (rail: PaymentRail) => Pick<SchemeOffer, 'check'> | undefined) {
  const offered = networks.flatMap((name) => {
    const rail = rails?.get(name);
    const offer = rail && of(rail);
    return offer ? [{ name, offer }] : [];
  });
  const results = await Promise.all(offered.map(({ offer }) => timed(() => offer.check())));
  return {
    byNetwork: Object.fromEntries(offered.map(({ name }, i) => [name, results[i]!])) as Record<string, CheckResult>,
    down: offered.filter((_, i) => results[i]!.status === 'down').map(({ name }) => name),
  };
}

export async function checkReadiness(deps: ReadinessDeps, networks: readonly NetworkName[]): Promise<ReadinessReport> {
  const { config } = deps;
  const providerNames = Object.keys(config.providers);
  const [chainResults, ledger, media, providerResults, offers] = await Promise.all([
    Promise.all(networks.map((name) => timed(chainProbe(deps, name)))),
    // a read by a key that never exists: a round trip to the database without writing
    timed(async () => void (await deps.ledger.get('readyz:probe'))),
    timed(async () => void (await deps.media.info('readyz-probe'))),
    Promise.all(providerNames.map((name) => timed((signal) => httpAnswers(`${config.providers[name]!.baseURL.replace(/\/+$/, '')}/models`, signal)))),
    Promise.all(SCHEMES_BESIDE_EXACT.map(({ offerOf }) => checkOffers(deps.rails, networks, offerOf))),
  ]);
  const [upto, channels, authCapture] = offers.map(({ byNetwork }) => byNetwork) as [Record<string, CheckResult>, Record<string, CheckResult>, Record<string, CheckResult>];
  // an offer down is degraded, not a 503: exact still pays there, and such a proof is refused without a charge
  const degraded = SCHEMES_BESIDE_EXACT.flatMap(({ label }, i) => offers[i]!.down.map((name) => `${label}:${name}`));
  const chains = Object.fromEntries(networks.map((name, i) => [name, chainResults[i]!]));
  const providers = Object.fromEntries(providerNames.map((name, i) => [name, providerResults[i]!]));
  const findings = deps.payments?.findings();
  const payments = Object.fromEntries(networks.map((name) => [name, paymentFindings(findings?.get(name))]));
  const notReady = networks.filter((name) => payments[name]!.status === 'down');
  // a network is usable when its chain answers and its last check found nothing in the way of a payment
  const anyChain = networks.some((name, i) => chainResults[i]!.status === 'ok' && payments[name]!.status === 'ok');
  if (anyChain) degraded.push(...notReady.map((name) => `payments:${name}`));
  const storesUp = ledger.status === 'ok' && media.status === 'ok';
  const capabilities = [...new Set(config.models.map((model) => model.capability))];
  const unavailable = capabilities.filter(
    (capability) =>
      !storesUp ||
      !anyChain ||
      !config.models.some((model) => model.capability === capability && (providers[model.provider]?.status ?? 'ok') === 'ok'),
  );
  return { status: unavailable.length === 0 ? 'ready' : 'not_ready', chains, ledger, media, providers, upto, channels, authCapture, payments, unavailable, degraded };
}
