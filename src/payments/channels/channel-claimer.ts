// The claimer: turns the charges committed on payment channels into money. Each round, per rail offering
// channels, one instance (a lease in the ledger) reads the escrow's state of every channel with charges not yet
// claimed, and claims them all in batches of claimWithSignature (the official facilitator signs each batch as
// receiverAuthorizer) when any of these holds:
//   - the unclaimed total reached the threshold;
//   - the oldest unclaimed charge waited maxAgeMs (keep it well under the withdraw delay);
//   - a payer started a withdrawal (withdrawRequestedAt): its delay must not run out before the claim.
// It then sweeps whatever is claimed and not settled to payTo with one settle(payTo, token). The escrow is the
// record of both steps, so a crash between claim and settle loses nothing: the next round sees the unsettled
// amount on chain and settles it; a claim whose receipt was lost is seen in the escrow's totalClaimed.
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import type { ChannelRecord, ChannelStore } from '../../store/channel-store.ts';
import type { PaymentRail, PaymentRails } from '../rails.ts';
import { BATCH_SETTLEMENT_SCHEME } from '../../x402/batch-settlement.ts';
import type { PaymentRequirement } from '../../x402/model.ts';
import type { ChannelFacilitator, OnChainChannel } from './channel-facilitator.ts';
import { NO_CHANNEL_OBSERVER, type ChannelObserver } from './channel-metrics.ts';

export interface ClaimPolicy {
  /** how often a round runs */
  intervalMs: number;
  /** claim as soon as this much (atomic units) is charged and unclaimed on a network */
  threshold: bigint;
  /** claim a charge at the latest this long after it was committed */
  maxAgeMs: number;
  /** channels per claimWithSignature */
  maxClaimsPerBatch: number;
}

export const DEFAULT_CLAIM_POLICY: ClaimPolicy = {
  intervalMs: 60_000,
  threshold: 1_000_000n,
  maxAgeMs: 5 * 60_000,
  maxClaimsPerBatch: 100,
};

export interface RoundReport {
  network: string;
  claimed: { channelId: string; totalClaimed: bigint }[];
  claimTransactions: string[];
  settleTransaction?: string;
  settledAmount?: bigint;
  /** why nothing was claimed, when nothing was */
  skipped?: string;
}

/** How many outstanding channels one round looks at, per network. */
const ROUND_LIMIT = 1_000;

export class ChannelClaimer {
  readonly #rails: PaymentRails;
  readonly #store: ChannelStore;
  readonly #log: Logger;
  readonly #policy: ClaimPolicy;
  readonly #observe: ChannelObserver;
  readonly #holder = `claimer-${randomUUID()}`;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(deps: { rails: PaymentRails; store: ChannelStore; log: Logger; observe?: ChannelObserver }, policy: Partial<ClaimPolicy> = {}) {
    this.#rails = deps.rails;
    this.#store = deps.store;
    this.#log = deps.log;
    this.#observe = deps.observe ?? NO_CHANNEL_OBSERVER;
    this.#policy = { ...DEFAULT_CLAIM_POLICY, ...policy };
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.#running = this.#running.then(() => this.round().catch((error: unknown) => this.#log.error({ err: error }, 'channel claim round failed')));
    }, this.#policy.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One round on every rail offering channels; `force` claims whatever is outstanding (the operator, tests). */
  async round(options: { force?: boolean } = {}): Promise<RoundReport[]> {
    const reports: RoundReport[] = [];
    for (const rail of this.#rails.values()) {
      if (!rail.channels) continue;
      const lease = `claimer:${rail.network.name}`;
      if (!(await this.#store.lock(lease, this.#holder, Math.max(this.#policy.intervalMs * 3, 60_000)))) {
        reports.push({ network: rail.network.name, claimed: [], claimTransactions: [], skipped: 'another instance holds the claim round' });
        continue;
      }
      try {
        reports.push(await this.#roundOn(rail, rail.channels.facilitator, options.force === true));
      } finally {
        await this.#store.unlock(lease, this.#holder);
      }
    }
    return reports;
  }

  async #roundOn(rail: PaymentRail, facilitator: ChannelFacilitator, force: boolean): Promise<RoundReport> {
    const network = rail.network.name;
    const report: RoundReport = { network, claimed: [], claimTransactions: [] };
    const candidates = await this.#store.outstanding(network, ROUND_LIMIT);
    // the escrow's word on each: what is already claimed (a lost receipt), and withdrawals under way
    const states = await Promise.all(candidates.map((record) => facilitator.readChannel(record.channelId)));
    const now = Date.now();
    const due: { record: ChannelRecord; state: OnChainChannel; claimTo: bigint }[] = [];
    let unclaimed = 0n;
    let urgent = force;
    for (const [i, record] of candidates.entries()) {
      const state = states[i]!;
      // never above the balance: a finalized withdrawal leaves no more to claim
      const claimTo = record.chargedCumulative < state.balance ? record.chargedCumulative : state.balance;
      await this.#mirror(record.channelId, state, now);
      if (claimTo <= state.totalClaimed) continue;
      due.push({ record, state, claimTo });
      unclaimed += claimTo - state.totalClaimed;
      if (state.withdrawRequestedAt !== 0) urgent = true;
      if (now - record.lastRequestAt >= this.#policy.maxAgeMs) urgent = true;
    }
    if (due.length > 0 && (urgent || unclaimed >= this.#policy.threshold)) {
      // oldest first, so a batch cap never starves a channel
      due.sort((a, b) => a.record.lastRequestAt - b.record.lastRequestAt);
      for (let start = 0; start < due.length; start += this.#policy.maxClaimsPerBatch) {
        const batch = due.slice(start, start + this.#policy.maxClaimsPerBatch);
        const claimed = await this.#claim(rail, facilitator, batch);
        if (claimed) {
          report.claimTransactions.push(claimed);
          for (const { record, claimTo } of batch) report.claimed.push({ channelId: record.channelId, totalClaimed: claimTo });
        }
      }
    } else if (due.length > 0) {
      report.skipped = `unclaimed ${unclaimed} below the threshold, none due yet`;
    }
    // the escrow's word where the facilitator can read it; else the ledger's: claims not known settled yet
    const unsettled = (await facilitator.unsettled(rail.payTo, rail.asset)) ?? ((await this.#store.unsettled(network, 1)).length > 0 ? 1n : 0n);
    if (unsettled > 0n) {
      // what the ledger knew claimed before the settle is what the settle certainly swept
      const sweeping = await this.#store.unsettled(network, ROUND_LIMIT);
      const settled = await facilitator.settle({ payload: { type: 'settle', receiver: rail.payTo, token: rail.asset } }, claimerRequirement(rail));
      if (settled.success) {
        report.settleTransaction = settled.transaction;
        report.settledAmount = settled.amount ?? 0n;
        this.#observe.settled(network, report.settledAmount);
        for (const record of sweeping) {
          await this.#store.update(record.channelId, (current) =>
            current && { ...current, settled: record.totalClaimed > current.settled ? record.totalClaimed : current.settled },
          );
        }
        this.#log.info({ network, tx: settled.transaction, amount: report.settledAmount.toString() }, 'channel claims settled');
      } else {
        this.#log.warn({ network, reason: settled.errorReason, tx: settled.transaction }, 'channel settle failed; next round retries');
      }
    }
    return report;
  }

  async #claim(rail: PaymentRail, facilitator: ChannelFacilitator, batch: { record: ChannelRecord; state: OnChainChannel; claimTo: bigint }[]): Promise<string | undefined> {
    const claims = batch.map(({ record, claimTo }) => ({
      voucher: { channel: record.config, maxClaimableAmount: record.signedMaxClaimable.toString() },
      signature: record.signature,
      totalClaimed: claimTo.toString(),
    }));
    const claimed = await facilitator.settle({ payload: { type: 'claim', claims } }, claimerRequirement(rail));
    if (!claimed.success) {
      // not recorded as claimed: the next round reads the escrow and claims again (a repeated row is a no-op there)
      this.#log.warn({ network: rail.network.name, reason: claimed.errorReason, tx: claimed.transaction, channels: batch.length }, 'channel claim failed; next round retries');
      return undefined;
    }
    for (const { record, claimTo } of batch) {
      await this.#store.update(record.channelId, (current) =>
        current && {
          ...current,
          totalClaimed: claimTo > current.totalClaimed ? claimTo : current.totalClaimed,
          lastClaimTx: claimed.transaction,
          updatedAt: Date.now(),
        },
      );
    }
    this.#observe.claimed(rail.network.name, batch.reduce((sum, { state, claimTo }) => sum + claimTo - state.totalClaimed, 0n));
    this.#log.info({ network: rail.network.name, tx: claimed.transaction, channels: batch.length }, 'channel vouchers claimed');
    return claimed.transaction;
  }

  /** Keeps the ledger's mirror of the escrow current (never moving totalClaimed backwards). */
  async #mirror(channelId: string, state: OnChainChannel, now: number): Promise<void> {
    await this.#store.update(channelId, (current) =>
      current && {
        ...current,
        balance: state.balance,
        totalClaimed: state.totalClaimed > current.totalClaimed ? state.totalClaimed : current.totalClaimed,
        withdrawRequestedAt: state.withdrawRequestedAt,
        refundNonce: state.refundNonce,
        syncedAt: now,
      },
    );
  }
}

/** The requirement a claim or settle is submitted under: the rail's channel terms, no amount of its own. */
export function claimerRequirement(rail: PaymentRail): PaymentRequirement {
  return {
    scheme: BATCH_SETTLEMENT_SCHEME,
    network: rail.network.name,
    amount: 0n,
    payTo: rail.payTo,
    asset: rail.asset,
    maxTimeoutSeconds: 300,
    extra: { ...rail.extra, ...rail.channels?.extra },
  };
}
