// GET /api/v1/payments/:id — the public facts of one payment, by transaction hash or payment key.
// Every field here is on-chain once settled (payer, amount, recipient, transaction), so it is safe to show
// to anyone. The prompt and the result are never shown here: proofs become public on-chain after
// settlement, so only the original request body proves you are the buyer — repeat the original POST
// with the same X-PAYMENT and body to receive the stored result again.
import { Hono } from 'hono';
import { ApiError } from '../errors.ts';
import type { Ledger, PaymentRecord } from '../store/ledger.ts';

export function publicPayment(payment: PaymentRecord): Record<string, unknown> {
  return {
    key: payment.key,
    state: payment.state,
    network: payment.network,
    amount: payment.amount,
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

export function paymentRoutes(ledger: Ledger): Hono {
  const app = new Hono();
  app.get('/api/v1/payments/:id', async (c) => {
    const id = c.req.param('id');
    if (id.length > 300) throw new ApiError(404, 'not_found', 'no such payment');
    const payment = (await ledger.findByTransaction(id)) ?? (await ledger.get(id));
    if (!payment) throw new ApiError(404, 'not_found', 'no such payment');
    return c.json(publicPayment(payment));
  });
  return app;
}
