// The floor under bench/upstream-overhead.ts's "added": what the least a gateway on Node can do adds to a chat
// completion, measured as that bench measures the gateway (client, relay and the tests' OpenAI-protocol upstream in
// one process, one call at a time, the direct call and each relay in random order each turn). Two relays:
//   bare  node:http server and client: read the body, JSON.parse it, post a chat request upstream, parse the answer,
//         answer with its text and usage;
//   hono  the same as a Hono route on @hono/node-server, upstream through the gateway's own client
//         (src/lib/node-http-fetch.ts), and its two hops timed: the request reaching the route, the answer
//         leaving it until the client has read it.
// Prints one JSON line: added p50/p90/p99 per relay, and the hono relay's hops.
// Settings: BENCH_OVERHEAD_ITERATIONS (3000), BENCH_OVERHEAD_WARMUP (1000).
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createNodeHttpClient } from '../src/lib/node-http-fetch.ts';
import { startOpenAIUpstream } from '../test/support/openai-upstream.ts';
import { envNumber } from './env-number.ts';
import { jsonRequest, newAgent, send, stats } from './load.ts';

const iterations = envNumber('BENCH_OVERHEAD_ITERATIONS', 3000);
const warmup = envNumber('BENCH_OVERHEAD_WARMUP', 1000);
const CHAT = { model: 'up/chat', prompt: 'Tell me about the sea', max_tokens: 32 };

interface Completion {
  choices: { message: { content: string } }[];
  usage: unknown;
}
const upstreamBody = (chat: typeof CHAT) => JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: chat.prompt }], max_tokens: chat.max_tokens });
const answerOf = (completion: Completion) => JSON.stringify({ response: completion.choices[0]!.message.content, usage: completion.usage });

const upstream = await startOpenAIUpstream();
const chatUrl = new URL(`${upstream.baseURL.replace(/\/$/, '')}/chat/completions`);
const upstreamAgent = new Agent({ keepAlive: true, maxSockets: 1 });

const bare = createServer((incoming, outgoing) => {
  const chunks: Buffer[] = [];
  incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
  incoming.on('end', () => {
    const body = upstreamBody(JSON.parse(Buffer.concat(chunks).toString()) as typeof CHAT);
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    request(chatUrl, { method: 'POST', agent: upstreamAgent, headers }, (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => parts.push(chunk));
      answer.on('end', () => {
        const reply = answerOf(JSON.parse(Buffer.concat(parts).toString()) as Completion);
        outgoing.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
        outgoing.end(reply);
      });
    }).end(body);
  });
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));

/** when the hono route started and returned, for the call in flight */
const route = { started: NaN, returned: NaN };
const client = createNodeHttpClient();
const app = new Hono().post('/api/v1/ai/chat', async (c) => {
  route.started = performance.now();
  const body = upstreamBody(await c.req.json<typeof CHAT>());
  const answer = await client.send(chatUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: undefined });
  const parts: Buffer[] = [];
  for await (const chunk of answer.body) parts.push(chunk as Buffer);
  const response = c.body(answerOf(JSON.parse(Buffer.concat(parts).toString()) as Completion), 200, { 'content-type': 'application/json' });
  route.returned = performance.now();
  return response;
});
const hono = await new Promise<Server>((resolve) => {
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server as Server));
});

const origin = (server: Server) => new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
const relays = { bare: origin(bare), hono: origin(hono) };
const agent = newAgent(1);
const direct = jsonRequest(chatUrl.pathname, JSON.parse(upstreamBody(CHAT)));
const viaRelay = jsonRequest('/api/v1/ai/chat', CHAT);
const added: Record<keyof typeof relays, number[]> = { bare: [], hono: [] };
const hops = { in: [] as number[], out: [] as number[] };
try {
  for (let i = 0; i < warmup + iterations; i++) {
    const turn = [...(['direct', 'bare', 'hono'] as const)].sort(() => Math.random() - 0.5);
    const ms: Record<string, number> = {};
    for (const side of turn) {
      const started = performance.now();
      const reply = await send(agent, side === 'direct' ? chatUrl : relays[side], side === 'direct' ? direct : viaRelay);
      if (reply.status !== 200) throw new Error(`${side} answered ${reply.status}: ${reply.body.toString().slice(0, 200)}`);
      JSON.parse(reply.body.toString());
      ms[side] = performance.now() - started;
      if (side === 'hono' && i >= warmup) {
        hops.in.push(route.started - started);
        hops.out.push(started + ms[side]! - route.returned);
      }
    }
    if (i < warmup) continue;
    added.bare.push(ms.bare! - ms.direct!);
    added.hono.push(ms.hono! - ms.direct!);
  }
  const figures = (samples: number[]) => {
    const { p50, p90, p99 } = stats(samples);
    return { p50, p90, p99 };
  };
  process.stdout.write(`${JSON.stringify({ added: { bare: figures(added.bare), hono: figures(added.hono) }, honoHops: { in: figures(hops.in), out: figures(hops.out) } })}\n`);
} finally {
  agent.destroy();
  upstreamAgent.destroy();
  await Promise.all([bare, hono].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  await upstream.close();
}
