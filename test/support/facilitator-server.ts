// A real x402 facilitator over HTTP (/verify, /settle, /supported), backed by our local facilitator:
// what the remote facilitator client is tested against, instead of stubbed functions.
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Facilitator } from '../../src/payments/facilitator.ts';

export async function startFacilitatorServer(
  network: string,
  facilitator: Facilitator,
  options: { requiredAuthorization?: string } = {},
): Promise<{ url: string; calls: string[]; stop(): Promise<void> }> {
  const calls: string[] = [];
  const app = new Hono();
  app.use(async (c, next) => {
    calls.push(`${c.req.method} ${c.req.path}`);
    if (options.requiredAuthorization && c.req.header('Authorization') !== options.requiredAuthorization) {
      return c.json({ error: 'unauthorized' }, 401);
    }
    await next();
  });
  app.get('/supported', async (c) =>
    c.json({ kinds: [{ x402Version: 1, scheme: 'exact', network, extra: await facilitator.requirementExtra() }] }),
  );
  app.post('/verify', async (c) => {
    const { paymentPayload, paymentRequirements } = await c.req.json();
    const result = await facilitator.verify(paymentPayload, paymentRequirements);
    return c.json(result.isValid ? { isValid: true, payer: result.payer } : { isValid: false, invalidReason: result.invalidReason, payer: result.payer });
  });
  app.post('/settle', async (c) => {
    const { paymentPayload, paymentRequirements } = await c.req.json();
    const outcome = await facilitator.settle(paymentPayload, paymentRequirements);
    if (outcome.status === 'settled') return c.json({ success: true, transaction: outcome.transaction, network, payer: outcome.payer });
    return c.json({ success: false, errorReason: outcome.reason, transaction: outcome.transaction ?? '', network, payer: outcome.payer });
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
