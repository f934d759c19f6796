// Whether each network can really be paid (EVM: the asset has contract code, the settlement key has gas, Multicall3
// where batching needs it; Solana: payTo's token account exists, the fee payer has SOL), checked at startup and
// again every READINESS_INTERVAL_MS, and kept: GET /readyz and the 402 read the last findings, never the chain,
// so their cost is bounded by the interval whatever the traffic. Findings are logged when they change ("NOT
// READY: ..." names what an operator must fix, then "ready again"). A network whose last check found a problem
// is not ready: /readyz says so (503 when no network is left) and the 402 stops offering it until a later check
// finds it fixed. A check that could not run (its RPC unreachable) keeps the last findings; /readyz's chain probe
// reports the RPC itself. It never stops the service: an RPC down now may be up by the first payment.
import type { Logger } from 'pino';
import type { PaymentRails } from './rails.ts';
import type { NetworkName } from '../x402/networks.ts';

/** How often each network's findings are checked again. */
export const READINESS_INTERVAL_MS = 60_000;

export interface NetworkFindings {
  /** what would make a payment there fail, in words an operator can act on; empty when ready */
  problems: string[];
  /** when the findings were last established (ms since epoch); undefined before the first check ran */
  checkedAt: number | undefined;
  /** why the last check could not run, if it could not (the findings before it are kept) */
  uncheckedReason?: string;
}

export class PaymentReadiness {
  readonly #rails: PaymentRails;
  readonly #log: Logger;
  readonly #intervalMs: number;
  readonly #findings = new Map<NetworkName, NetworkFindings>();
  #running: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(rails: PaymentRails, log: Logger, options: { intervalMs?: number } = {}) {
    this.#rails = rails;
    this.#log = log;
    this.#intervalMs = options.intervalMs ?? READINESS_INTERVAL_MS;
    for (const name of rails.keys()) this.#findings.set(name, { problems: [], checkedAt: undefined });
  }

  /** Checks now (not awaited by startup: remote RPCs may be slow) and then every interval. */
  start(): Promise<void> {
    const first = this.check();
    this.#timer = setInterval(() => void this.check(), this.#intervalMs);
    this.#timer.unref();
    return first;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  /** Whether `network` can be paid as far as the last check knows (true before the first check has run). */
  ready(network: NetworkName): boolean {
    return (this.#findings.get(network)?.problems.length ?? 0) === 0;
  }

  /** The last findings of every network. */
  findings(): ReadonlyMap<NetworkName, NetworkFindings> {
    return this.#findings;
  }

  /** One check of every network; concurrent callers share the one in flight. */
  check(): Promise<void> {
    this.#running ??= this.#checkAll().finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #checkAll(): Promise<void> {
    await Promise.all(
      [...this.#rails.values()].map(async (rail) => {
        const network = rail.network.name;
        const before = this.#findings.get(network)!;
        if (!rail.facilitator.readinessProblems) {
          this.#findings.set(network, { problems: [], checkedAt: Date.now() });
          return;
        }
        try {
          const problems = await rail.facilitator.readinessProblems(rail.payTo);
          this.#findings.set(network, { problems, checkedAt: Date.now() });
          const changed = problems.join('\n') !== before.problems.join('\n');
          if (changed || before.checkedAt === undefined) for (const problem of problems) this.#log.error({ network }, `NOT READY: ${problem}`);
          if (problems.length === 0 && before.problems.length > 0) this.#log.info({ network }, `${network} is ready to be paid again`);
        } catch (error) {
          const reason = shortReason(error);
          this.#findings.set(network, { ...before, uncheckedReason: reason });
          // one readable line (no stack) when the reason is new: the usual cause is an RPC that cannot be reached
          if (reason !== before.uncheckedReason) {
            this.#log.warn({ network }, `could not check that ${network} is ready to be paid: ${reason}`);
          }
        }
      }),
    );
  }
}

/** The first line of an error and of its cause (viem and fetch put the reason there), never a stack. */
function shortReason(error: unknown): string {
  const { message, details, cause } = error as { message?: string; details?: string; cause?: { message?: string; code?: string } };
  const first = (details ?? message ?? String(error)).split('\n')[0];
  const why = cause?.code ?? cause?.message?.split('\n')[0];
  return why && !first!.includes(why) ? `${first} (${why})` : first!;
}
