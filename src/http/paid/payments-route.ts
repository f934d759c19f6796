// GET /api/v1/payments/:id — one payment, by transaction hash or payment key; or a payment channel, by its id.
//
// Anyone gets the public facts: every field shown is on-chain once settled (payer, amount, recipient,
// transaction). The prompt is never shown, and the result only to the payer: a proof becomes public
// on-chain after settlement, so knowing the id proves nothing. The payer proves itself by signing in
// (SIGN-IN-WITH-X, the x402 sign-in-with-x extension: src/x402/sign-in-with-x.ts). Then a settled payment's
// result is returned as `result`, exactly the 200 body the original call answered.
//
// Deprecated, still honoured: signing receiptChallenge(id, timestamp) (src/x402/receipt-challenge.ts) and
// sending X-Payer-Timestamp (unix seconds, within 5 minutes of the server's clock) and X-Payer-Signature
// (EVM: 0x-hex EIP-191 personal_sign; Solana: base58 ed25519). Its signatures can be replayed within those
// 5 minutes; sign-in nonces are single-use.
import { Hono, type Context } from 'hono';
import { ApiError } from '../../errors.ts';
import type { Ledger, PaymentRecord } from '../../store/ledger.ts';
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import { receiptChallenge, RECEIPT_PROOF_MAX_SKEW_SECONDS } from '../../x402/receipt-challenge.ts';
import { isSignedByPayer } from '../../payments/payer-signature.ts';
import { isSamePayer } from '../../payments/sign-in-replay.ts';
import { SIGN_IN_WITH_X_HEADER, verifySignIn } from '../../x402/sign-in-with-x.ts';
import { requestOrigin, type OriginOptions } from '../origin.ts';
import { CHANNEL_ID, publicChannel } from './channel-views.ts';

export interface PaymentRoutesOptions {
  config: OriginOptions;
  /** the enabled networks: a sign-in names one of their chains */
  networks: readonly NetworkName[];
}

export const PAYER_TIMESTAMP_HEADER = 'X-Payer-Timestamp';
export const PAYER_SIGNATURE_HEADER = 'X-Payer-Signature';

export function publicPayment(payment: PaymentRecord): Record<string, unknown> {
  return {
    key: payment.key,
    state: payment.state,
    network: payment.network,
    amount: payment.amount,
    // what moved: the amount, or less under upto (null until settled)
    settledAmount: payment.settledAmount,
    asset: payment.asset,
    payTo: payment.payTo,
    payer: payment.payer,
    transaction: payment.txHash,
    resource: payment.resource,
    error: payment.error,
    resultAvailable: payment.result !== null,
    createdAt: payment.createdAt,
    updatedAt: payment.updatedAt,
  };
}

/**
 * Which of `candidates` (the payments a transaction settled, or the one a key names) the caller proves it paid: none
 * when it proves nothing; a 401 when it tries and none is its own. One transaction settles several payments when
 * settlementBatching is on: the proof picks the caller's own.
 */
async function callersPayment(c: Context, id: string, candidates: PaymentRecord[], ledger: Ledger, options: PaymentRoutesOptions): Promise<PaymentRecord | undefined> {
  const signIn = c.req.header(SIGN_IN_WITH_X_HEADER);
  if (signIn !== undefined) {
    const { address } = await verifySignIn(signIn, requestOrigin(c, options.config), options.networks, ledger);
    const own = candidates.find((payment) => payment.payer && isSamePayer(address, payment.payer));
    if (!own) throw new ApiError(401, 'unauthorized', `${SIGN_IN_WITH_X_HEADER}: ${address} is not the payer of this payment`, { field: SIGN_IN_WITH_X_HEADER });
    return own;
  }
  return callerSignedReceipt(c, id, candidates);
}

/** The deprecated X-Payer-Timestamp / X-Payer-Signature proof. */
async function callerSignedReceipt(c: Context, id: string, candidates: PaymentRecord[]): Promise<PaymentRecord | undefined> {
  const timestamp = c.req.header(PAYER_TIMESTAMP_HEADER);
  const signature = c.req.header(PAYER_SIGNATURE_HEADER);
  if (timestamp === undefined && signature === undefined) return undefined;
  const refuse = (why: string, field: string): never => {
    throw new ApiError(401, 'unauthorized', why, { field });
  };
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) refuse(`${PAYER_TIMESTAMP_HEADER} must be unix seconds`, PAYER_TIMESTAMP_HEADER);
  if (!signature) refuse(`${PAYER_SIGNATURE_HEADER} is required with ${PAYER_TIMESTAMP_HEADER}`, PAYER_SIGNATURE_HEADER);
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > RECEIPT_PROOF_MAX_SKEW_SECONDS) {
    refuse(`${PAYER_TIMESTAMP_HEADER} is more than ${RECEIPT_PROOF_MAX_SKEW_SECONDS} s from the server's clock`, PAYER_TIMESTAMP_HEADER);
  }
  for (const payment of candidates) {
    const network = NETWORKS[payment.network as NetworkName];
    if (network && payment.payer && (await isSignedByPayer(network.family, payment.payer, receiptChallenge(id, Number(timestamp)), signature!))) return payment;
  }
  return refuse(`${PAYER_SIGNATURE_HEADER} is not the payer's signature of this payment's receipt challenge`, PAYER_SIGNATURE_HEADER);
}

/** The payments GET /api/v1/payments/:id names: those its transaction hash settled, or the one its key names. */
export async function findPayments(ledger: Ledger, id: string): Promise<PaymentRecord[]> {
  const settled = await ledger.findByTransaction(id);
  if (settled.length > 0) return settled;
  const byKey = await ledger.get(id);
  return byKey ? [byKey] : [];
}

/** A transaction that settled several payments, to a caller who proved none its own: only what the chain shows of it. */
function publicTransaction(payments: PaymentRecord[]): Record<string, unknown> {
  const [first] = payments;
  return {
    transaction: first!.txHash,
    network: first!.network,
    state: first!.state,
    payments: payments.length,
    resultAvailable: payments.some((payment) => payment.result !== null),
  };
}

export function paymentRoutes(ledger: Ledger, options: PaymentRoutesOptions): Hono {
  const app = new Hono();
  app.get('/api/v1/payments/:id', async (c) => {
    const id = c.req.param('id');
    if (id.length > 300) throw new ApiError(404, 'not_found', 'no such payment');
    const candidates = await findPayments(ledger, id);
    if (candidates.length === 0) {
      // a payment channel, by its id: what went through it
      const channel = CHANNEL_ID.test(id) ? await ledger.channels?.get(id) : undefined;
      if (channel) return c.json(publicChannel(channel));
      throw new ApiError(404, 'not_found', 'no such payment');
    }
    const own = await callersPayment(c, id, candidates, ledger, options);
    if (!own && candidates.length > 1) return c.json(publicTransaction(candidates));
    const payment = own ?? candidates[0]!;
    const deliverable = payment.state === 'settled' && payment.result !== null;
    return c.json({ ...publicPayment(payment), ...(own && deliverable ? { result: payment.result!.body } : {}) });
  });
  return app;
}
