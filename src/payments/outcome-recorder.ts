// Writes what a settlement did (settled, failed, still unknown) to a payment's ledger row when the ledger's
// database is briefly unavailable (a restart, a failover); the gate also releases through it a reservation
// that such an outage interrupted before settlement. Past the settlement, money may have moved: an
// unrecorded outcome must neither become an error that says nothing was charged nor be lost. So the write is
// retried: for a short while within the request (a database back within it answers the client as if nothing
// happened), then in the background. Until it lands the row stays 'pending', which keeps the proof from being
// used again, and reconciliation settles the row's fate from the chain should this process die first.
import type { Logger } from 'pino';

export interface OutcomeRecorderOptions {
  /** how long a request waits for its outcome to be recorded before it answers without; default 8 s */
  waitMs?: number;
  /** how long the background keeps trying; default 10 min (reconciliation covers what is left) */
  giveUpMs?: number;
  /** pause between attempts; default 250 ms */
  everyMs?: number;
}

export class OutcomeRecorder {
  readonly #log: Logger;
  readonly #waitMs: number;
  readonly #giveUpMs: number;
  readonly #everyMs: number;

  constructor(log: Logger, options: OutcomeRecorderOptions = {}) {
    this.#log = log;
    this.#waitMs = options.waitMs ?? 8_000;
    this.#giveUpMs = options.giveUpMs ?? 10 * 60_000;
    this.#everyMs = options.everyMs ?? 250;
  }

  /**
   * Runs `write` until it answers. Resolves with its answer when that comes within waitMs, else with undefined
   * while the attempts go on in the background (logged once when they give up).
   */
  record(key: string, write: () => Promise<boolean>, what: string): Promise<boolean | undefined> {
    const started = Date.now();
    const attempts = (async (): Promise<boolean | undefined> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await write();
        } catch (error) {
          if (attempt === 0) this.#log.error({ err: error, key }, `could not record ${what}; retrying`);
          if (Date.now() - started >= this.#giveUpMs) {
            this.#log.error({ key }, `gave up recording ${what}; reconciliation will settle the payment from the chain`);
            return undefined;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, this.#everyMs).unref());
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, this.#waitMs, undefined)));
    return Promise.race([attempts, waited]).finally(() => clearTimeout(timer));
  }
}
