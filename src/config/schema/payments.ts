// When and how payments are taken: proof lifetimes, settle-first rules, settlement, channels, reconciliation,
// readiness checks, reservation leases and the bound on failed attempts.
import { z } from 'zod';
import { milliseconds } from './duration.ts';
import { NETWORK_NAMES } from '../../x402/networks.ts';

const CAPABILITIES = ['chat', 'image', 'speech'] as const;
/** a capability, a network, or network:capability (payments/settle-first.ts) */
const settleFirstRule = z.enum([
  ...CAPABILITIES,
  ...NETWORK_NAMES,
  ...NETWORK_NAMES.flatMap((network) => CAPABILITIES.map((capability) => `${network}:${capability}`)),
]);

const validitySeconds = z.number().int().positive().max(3600, 'at most 3600 (an hour): the longest validity the x402-ai clients sign');

export const paymentFields = {
  /**
   * seconds a client has to complete payment, per capability (Solana blockhashes live ~60-90 s); at most an hour,
   * the longest validity this project's clients sign (client/offer-terms.ts)
   */
  maxTimeoutSeconds: z
    .object({
      chat: validitySeconds,
      image: validitySeconds,
      speech: validitySeconds,
    })
    .default({ chat: 60, image: 120, speech: 60 }),
  /**
   * paid calls settled BEFORE the work runs (long work vs. a short-lived proof, e.g. a Solana blockhash):
   * rules naming a capability ("image"), a network ("solana") or both ("solana:image"); see
   * payments/settle-first.ts. If such work then fails, the payment stays settled and a retry of the same
   * proof runs the work again at no charge; the default settles only after the result is stored.
   */
  settleFirst: z.array(settleFirstRule).default([]),
  /** how long a settlement may wait for confirmation before it is treated as 'unknown' */
  settlementTimeoutMs: milliseconds().default(30_000),
  /**
   * EVM exact settlements that queue up while the settlement key is sending go out together in one Multicall3
   * aggregate3 transaction, each transfer allowed to fail alone (needs Multicall3 at its canonical address;
   * the sandbox places it). Off by default: measured, it did not pay on the sandbox chain (docs/performance.md, "Settlement batching").
   */
  settlementBatching: z.boolean().default(false),
  /**
   * payment channels (x402 batch-settlement; docs/channels.md): the withdraw delay channels are opened with
   * (seconds, 15 minutes to 30 days), and when the claimer claims the charged vouchers and settles them to
   * payTo: every `claimIntervalMs` it claims once `claimThreshold` (atomic units) is unclaimed on a network,
   * or a charge waited `claimMaxAgeMs`, or a payer started a withdrawal (keep claimMaxAgeMs well below the
   * withdraw delay); `maxClaimsPerBatch` channels per claim transaction; `depositMethod` how payers deposit:
   * "eip3009" (the token's receiveWithAuthorization, USDC's) or "permit2" (a Permit2 witness transfer, for
   * tokens without ERC-3009; a payer without a Permit2 allowance signs an EIP-2612 permit with it)
   */
  channels: z
    .object({
      withdrawDelay: z.number().int().min(900).max(2_592_000).default(900),
      depositMethod: z.enum(['eip3009', 'permit2']).default('eip3009'),
      claimIntervalMs: milliseconds().default(60_000),
      claimThreshold: z.string().regex(/^\d{1,30}$/, 'atomic units, a decimal string').default('1000000'),
      claimMaxAgeMs: milliseconds().default(300_000),
      maxClaimsPerBatch: z.number().int().min(1).max(500).default(100),
    })
    .refine((c) => c.claimMaxAgeMs + c.claimIntervalMs < c.withdrawDelay * 1000, {
      message: 'claimMaxAgeMs + claimIntervalMs must stay below the withdraw delay, or a withdrawal could complete before its claim',
    })
    .default({ withdrawDelay: 900, depositMethod: 'eip3009', claimIntervalMs: 60_000, claimThreshold: '1000000', claimMaxAgeMs: 300_000, maxClaimsPerBatch: 100 }),
  /** how often pending settlements are reconciled */
  reconcileIntervalMs: milliseconds().default(15_000),
  /** how often each network's payment readiness (asset code, gas, fee payer, token accounts) is checked again */
  readinessCheckIntervalMs: milliseconds(1_000).default(60_000),
  /**
   * an instance reconciling a pending payment holds it this long (instances sharing a database never check one
   * payment at once; a check outliving it is abandoned); a payment whose instance died mid-check waits this long
   */
  reconcileLeaseMs: milliseconds().default(5_000),
  /**
   * a pending payment updated more recently than this is left to the request that may still be settling it.
   * 0 (default) is safe with the built-in facilitators, whose checks tell "in flight" from "failed"; raise it
   * to spare the RPC calls a check of an in-flight settlement costs.
   */
  settlingGraceMs: milliseconds(0).default(0),
  /**
   * a reservation this old that never reached settlement belongs to a request that died (a crash mid-work);
   * it is released so its proof can be used again. Keep it above the slowest generation.
   */
  abandonedAfterMs: milliseconds().default(10 * 60_000),
  /**
   * a reservation is held by its instance this long past that instance's last heartbeat (sent every quarter of
   * it): a reservation of an instance that died mid-work is taken over by the next use of its proof, or
   * released, this long after the death, whatever abandonedAfterMs says. Keep it above the longest event-loop stall.
   */
  reservationLeaseMs: milliseconds(1_000).default(10_000),
  /**
   * A paid call whose work fails (upstream error, model failure) is never charged and its proof is released, so
   * the same proof may be sent again: its work may fail `unsettled` times in all, then the proof is refused
   * (402 payment_attempts_exhausted; a new payment is needed). Settled first (settleFirst), each retry of the
   * proof reruns the paid-for work at no charge: it may fail `settled` times, then the payment stays settled
   * without a result, marked payment_attempts_exhausted in the ledger for the operator to refund.
   */
  maxFailedAttempts: z
    .object({ unsettled: z.number().int().min(1).default(3), settled: z.number().int().min(1).default(5) })
    .default({ unsettled: 3, settled: 5 }),
};
