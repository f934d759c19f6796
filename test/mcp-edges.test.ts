// /mcp's edges, from raw HTTP: a Host or Origin the gateway is not known by is refused before any work (DNS
// rebinding), and so is a behind-proxy request whose forwarded host is foreign; a JSON-RPC batch is served only
// under the one protocol version that has batches (2025-03-26), bounded there, its answer an array and its ids
// distinct; malformed params are -32602, not a parse or internal error; a request without Host is answered in
// JSON-RPC; the 2026-07-28 wire echoes the request id on its errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './support/service.ts';
import { sendRaw } from './support/raw-http.ts';
import type { RunningService } from '../src/service.ts';

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'] });
});
after(() => service?.stop());

const LEGACY = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-11-25' };
const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const rpc = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

async function post(body: unknown, headers: Record<string, string> = LEGACY): Promise<{ status: number; body: any }> {
  const response = await fetch(`${service.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  assert.match(response.headers.get('content-type') ?? '', /application\/json/);
  return { status: response.status, body: await response.json() };
}

/** A raw request whose Host (and more) the test chooses: fetch would send its own. */
async function postRaw(headers: Record<string, string>, body: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  const lines = Object.entries({ ...LEGACY, 'Content-Length': String(Buffer.byteLength(text)), ...headers }).map(([name, value]) => `${name}: ${value}`);
  const answer = await sendRaw(service.url, `POST /mcp HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${text}`);
  return { status: answer.status, body: JSON.parse(answer.body) };
}

test('a foreign Host or Origin is refused with a JSON-RPC 403 before any work; localhost names are served', async () => {
  const { port } = new URL(service.url);
  const list = rpc('tools/list');
  for (const headers of [{ Host: `evil.example:${port}` }, { Host: `localhost:${port}`, Origin: 'http://evil.example' }, { Host: 'evil.example', Origin: 'http://localhost' }] as Record<string, string>[]) {
    const answer = await postRaw(headers, list);
    assert.equal(answer.status, 403, JSON.stringify(headers));
    assert.equal(answer.body.jsonrpc, '2.0');
    assert.match(answer.body.error.message, /^Forbidden: (Host|Origin) /);
  }
  for (const headers of [{ Host: `localhost:${port}` }, { Host: `127.0.0.1:${port}`, Origin: `http://localhost:${port}` }, { Host: `[::1]:${port}` }] as Record<string, string>[]) {
    const answer = await postRaw(headers, list);
    assert.equal(answer.status, 200, JSON.stringify(headers));
    assert.ok(Array.isArray(answer.body.result.tools));
  }
});

test('a JSON-RPC batch is refused under a protocol version without batches, served (and bounded) under 2025-03-26', async () => {
  const batch = [rpc('tools/list', undefined, 1), rpc('tools/list', undefined, 2)];
  for (const version of ['2025-06-18', '2025-11-25', '2026-07-28']) {
    const refused = await post(batch, { ...LEGACY, 'Mcp-Protocol-Version': version });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, -32600);
    assert.match(refused.body.error.message, /batches are not part of MCP/);
  }
  const served = await post(batch, { ...LEGACY, 'Mcp-Protocol-Version': '2025-03-26' });
  assert.equal(served.status, 200);
  assert.deepEqual(served.body.map((answer: { id: number }) => answer.id).sort(), [1, 2]);
  const huge = await post(Array.from({ length: 100 }, (_, id) => rpc('tools/list', undefined, id)), { ...LEGACY, 'Mcp-Protocol-Version': '2025-03-26' });
  assert.equal(huge.status, 400);
  assert.match(huge.body.error.message, /at most 16 messages/);
  // a batch's answer is an array, even of one; two requests of one id would share one answer: refused
  const one = await post([rpc('tools/list', undefined, 5)], { ...LEGACY, 'Mcp-Protocol-Version': '2025-03-26' });
  assert.equal(one.status, 200);
  assert.deepEqual(one.body.map((answer: { id: number }) => answer.id), [5]);
  const twins = await post([rpc('tools/list', undefined, 1), rpc('ping', undefined, 1)], { ...LEGACY, 'Mcp-Protocol-Version': '2025-03-26' });
  assert.equal(twins.status, 400);
  assert.match(twins.body.error.message, /an id of its own/);
});

test('malformed params are invalid params, on either wire: arguments as an array, _meta as a string', async () => {
  const arrayArguments = await post(rpc('tools/call', { name: 'chat', arguments: [1, 2] }));
  assert.equal(arrayArguments.body.error.code, -32602);
  const modern = { ...LEGACY, 'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'chat' };
  const modernArray = await post(rpc('tools/call', { name: 'chat', arguments: [1], _meta: MODERN_META }, 7), modern);
  assert.equal(modernArray.body.error.code, -32602);
  assert.equal(modernArray.body.id, 7, 'the 2026-07-28 wire echoes the request id on errors');
  for (const [headers, params] of [
    [LEGACY, { name: 'chat', arguments: {}, _meta: 'x' }],
    [modern, { name: 'chat', arguments: {}, _meta: 'x' }],
  ] as const) {
    const answer = await post(rpc('tools/call', params, 9), headers);
    assert.ok(answer.status < 500);
    assert.notEqual(answer.body.error.code, -32700, 'the body is JSON: not a parse error');
    assert.notEqual(answer.body.error.code, -32603, 'the client is at fault: not an internal error');
  }
  // params the SDK's own schemas refuse: invalid params in one line, not an internal error quoting zod
  for (const [message, field] of [
    [rpc('initialize', { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } }), 'params.protocolVersion'],
    [rpc('resources/read', { uri: 7 }), 'params.uri'],
  ] as const) {
    const answer = await post(message);
    assert.equal(answer.body.error.code, -32602, JSON.stringify(answer.body));
    assert.match(answer.body.error.message, new RegExp(`^Invalid params: ${field.replace('.', '\\.')}: Invalid input: expected string`));
  }
});

test('a request without Host is answered in JSON-RPC, naming the header', async () => {
  const body = JSON.stringify(rpc('tools/list'));
  const answer = await sendRaw(service.url, `POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  assert.equal(answer.status, 400);
  const parsed = JSON.parse(answer.body);
  assert.equal(parsed.jsonrpc, '2.0');
  assert.equal(parsed.id, null);
  assert.equal(parsed.error.code, -32600);
  assert.equal(parsed.error.data.field, 'Host');
});

test('2026-07-28: a header that disagrees with the body is -32020 with HTTP 400; an unknown version names the supported ones', async () => {
  const mismatch = await post(rpc('tools/list', { _meta: MODERN_META }, 3), { ...LEGACY, 'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'prompts/list' });
  assert.equal(mismatch.status, 400);
  assert.equal(mismatch.body.error.code, -32020);
  assert.equal(mismatch.body.id, 3);
  const network = await post(rpc('tools/call', { name: 'chat', arguments: { prompt: 'hi', network: 'base' }, _meta: MODERN_META }, 4), {
    ...LEGACY,
    'Mcp-Protocol-Version': '2026-07-28',
    'Mcp-Method': 'tools/call',
    'Mcp-Name': 'chat',
    'Mcp-Param-Network': 'solana',
  });
  assert.equal(network.status, 400);
  assert.equal(network.body.error.code, -32020, 'Mcp-Param-Network must be the network argument');
});
