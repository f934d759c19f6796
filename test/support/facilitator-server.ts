// A real x402 facilitator over HTTP (/verify, /settle, /supported), backed by our local facilitator:
// what the remote facilitator client is tested against, instead of stubbed functions.
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Facilitator } from '../../src/payments/facilitator.ts';
import { proofFromStored, requirementFromStored, type PaymentProof, type PaymentRequirement } from '../../src/x402/model.ts';
import { NETWORKS, type NetworkName } from '../../src/x402/networks.ts';

/** Reads a /verify or /settle request of either protocol version into the internal model. */
function fromWire(request: { x402Version?: number; paymentPayload?: any; paymentRequirements?: unknown }): [PaymentProof, PaymentRequirement] {
  const payload = request.paymentPayload ?? {};
  const proof = proofFromStored(payload.x402Version === 2 ? { ...payload.accepted, payload: payload.payload, wire: 2 } : payload);
  const requirement = requirementFromStored(request.paymentRequirements);
  if (!proof || !requirement) throw new Error('malformed facilitator request');
  return [proof, requirement];
}

export async function startFacilitatorServer(
  network: string,
  facilitator: Facilitator,
  options: { requiredAuthorization?: string; /** protocol versions /supported lists (default [1]) */ versions?: (1 | 2)[] } = {},
): Promise<{ url: string; calls: string[]; versionsSeen: number[]; stop(): Promise<void> }> {
  const calls: string[] = [];
  const versionsSeen: number[] = [];
  const versions = options.versions ?? [1];
  const names = { 1: network, 2: NETWORKS[network as NetworkName].caip2 };
  const app = new Hono();
  app.use(async (c, next) => {
    calls.push(`${c.req.method} ${c.req.path}`);
    if (options.requiredAuthorization && c.req.header('Authorization') !== options.requiredAuthorization) {
      return c.json({ error: 'unauthorized' }, 401);
    }
    await next();
  });
  app.get('/supported', async (c) =>
    c.json({
      kinds: await Promise.all(
        versions.map(async (x402Version) => ({ x402Version, scheme: 'exact', network: names[x402Version], extra: await facilitator.requirementExtra() })),
      ),
    }),
  );
  app.post('/verify', async (c) => {
    const request = await c.req.json();
    versionsSeen.push(request.x402Version);
    const result = await facilitator.verify(...fromWire(request));
    return c.json(result.isValid ? { isValid: true, payer: result.payer } : { isValid: false, invalidReason: result.invalidReason, payer: result.payer });
  });
  app.post('/settle', async (c) => {
    const request = await c.req.json();
    versionsSeen.push(request.x402Version);
    const outcome = await facilitator.settle(...fromWire(request));
    if (outcome.status === 'settled') return c.json({ success: true, transaction: outcome.transaction, network, payer: outcome.payer });
    return c.json({ success: false, errorReason: outcome.reason, transaction: ('transaction' in outcome && outcome.transaction) || '', network, payer: outcome.payer });
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    versionsSeen,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
