// An official @x402/core x402Facilitator served over HTTP at /supported, /verify and /settle on 127.0.0.1, each
// /settle request shown to `onSettle` first: what the official facilitator doubles of the tests run on.
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { x402Facilitator } from '@x402/core/facilitator';

export interface ServedFacilitator {
  url: string;
  stop(): Promise<void>;
}

export async function serveOfficialFacilitator(
  facilitator: x402Facilitator,
  onSettle: (request: { paymentPayload: any; paymentRequirements: any }) => void,
): Promise<ServedFacilitator> {
  const app = new Hono();
  app.get('/supported', (c) => c.json(facilitator.getSupported()));
  app.post('/verify', async (c) => {
    const { paymentPayload, paymentRequirements } = await c.req.json();
    return c.json(await facilitator.verify(paymentPayload, paymentRequirements));
  });
  app.post('/settle', async (c) => {
    const request = await c.req.json();
    onSettle(request);
    return c.json(await facilitator.settle(request.paymentPayload, request.paymentRequirements));
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
