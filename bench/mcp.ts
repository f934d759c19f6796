// /mcp's unpaid tool call on each MCP wire, beside the HTTP route's unpaid 402 of the same body in the same run:
// `chat` called without payment, answered with its PaymentRequired, on 2025-11-25 (one POST, Mcp-Protocol-Version)
// and on 2026-07-28 (the `_meta` envelope, Mcp-Method / Mcp-Name / Mcp-Param-Network, the extension binding's
// payment_required result); with BENCH_BASELINE_DIR naming another checkout of this repository (with node_modules),
// that checkout's /mcp on 2025-11-25 too. Closed loop, BENCH_CONNECTIONS (20) connections, BENCH_ROUNDS (5)
// interleaved rounds over BENCH_SECONDS (10) per side, the gateway as `npm start` runs it (bench/serve.ts). Prints
// req/s, p50 and the server's CPU per answer (from /proc: less sensitive to other jobs than req/s).
//   node bench/mcp.ts
import { join } from 'node:path';
import { startGatewayChild, type GatewayChild } from './gateway-child.ts';
import { alternatingLoad, jsonRequest, sendOnce, type LoadResult, type RequestSpec, type TimedLoadOptions } from './load.ts';
import { envNumber } from './env-number.ts';

const connections = envNumber('BENCH_CONNECTIONS', 20);
const seconds = envNumber('BENCH_SECONDS', 10);
const rounds = envNumber('BENCH_ROUNDS', 5);
const baselineDir = process.env.BENCH_BASELINE_DIR;

const CHAT = { model: 'local/demo-bigram', prompt: 'Hello there', max_tokens: 16 };
const ACCEPT = { Accept: 'application/json, text/event-stream' };
const legacy = jsonRequest('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: { ...CHAT, network: 'base' } } }, { ...ACCEPT, 'Mcp-Protocol-Version': '2025-11-25' });
const modern = jsonRequest(
  '/mcp',
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'chat',
      arguments: { ...CHAT, network: 'base' },
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'org.x402/payment': {} } } },
    },
  },
  { ...ACCEPT, 'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'chat', 'Mcp-Param-Network': 'base' },
);
const http = jsonRequest('/api/v1/ai/chat', CHAT, { 'X-Network': 'base' });

const gateways: [string, GatewayChild][] = [['gateway', await startGatewayChild()]];
if (baselineDir) gateways.push([`baseline (${baselineDir})`, await startGatewayChild({}, join(baselineDir, 'bench/serve.ts'))]);
try {
  const [, gateway] = gateways[0]!;
  // the MCP SDK loads at the first POST /mcp: not in the measurement
  for (const [, g] of gateways) await sendOnce(g.url, legacy);
  const side = (g: GatewayChild, spec: RequestSpec, expectStatus: number): TimedLoadOptions => ({ origin: g.url, spec, connections, seconds, warmupSeconds: 1, expectStatus, serverPid: g.pid });
  const sides: [string, TimedLoadOptions][] = [
    ['HTTP POST /api/v1/ai/chat (402)', side(gateway, http, 402)],
    ['/mcp tools/call, 2025-11-25', side(gateway, legacy, 200)],
    ['/mcp tools/call, 2026-07-28', side(gateway, modern, 200)],
    ...gateways.slice(1).map(([name, g]): [string, TimedLoadOptions] => [`${name} /mcp, 2025-11-25`, side(g, legacy, 200)]),
  ];
  const results = await alternatingLoad(sides.map(([, s]) => s), rounds);
  const cpuPerAnswer = (r: LoadResult) => (r.serverCpuPct === null ? '-' : `${((r.serverCpuPct / 100 / r.rps) * 1e6).toFixed(0)} us`);
  process.stdout.write(`unpaid chat, ${connections} connections, ${rounds} interleaved rounds:\n`);
  for (const [i, [name]] of sides.entries()) {
    const r = results[i]!;
    process.stdout.write(
      `  ${name.padEnd(48)}${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  server CPU ${cpuPerAnswer(r)}/answer  (${Object.entries(r.statuses).map(([s, n]) => `${s}x${n}`).join(' ')})\n`,
    );
  }
} finally {
  for (const [, g] of gateways) await g.stop();
}
