// Generated hostile requests for test/fuzz.test.ts: bodies, headers, paths and methods, each drawn from a seeded
// Prng, so a seed names one exact list of requests. Proofs are in fuzz-proofs.ts. A request goes out through
// fetch when fetch can carry it, and as raw bytes (raw-http.ts) when it cannot: a Host with a space, a bare CR,
// backslashes, a lying Content-Length.
import type { Prng } from './prng.ts';

/**
 * Which error shape a route answers in: the service's { error, code, field? }, OpenAI's { error: { ... } },
 * Anthropic's { type: 'error', error: { type, message } } (/v1/messages), or JSON-RPC (/mcp).
 */
export type Surface = 'spec' | 'openai' | 'anthropic' | 'mcp';

export interface FuzzRequest {
  /** what was generated, for failure messages */
  label: string;
  surface: Surface;
  method: string;
  /** the request-target, as sent */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** set: sent as these bytes over a plain socket instead of through fetch */
  raw?: Buffer;
  /** the request carries a proof that was tampered with: whatever else happens, it must not be served (no 2xx) */
  tampered?: boolean;
  /** the client hangs up before its request is complete, so the server may close without an answer */
  mayGoUnanswered?: boolean;
}

export interface PaidRoute {
  path: string;
  surface: Surface;
  /** a body the route accepts and quotes */
  body: Record<string, unknown>;
}

export const PAID_ROUTES: readonly PaidRoute[] = [
  { path: '/api/v1/ai/chat', surface: 'spec', body: { model: 'local/demo-bigram', prompt: 'Hello there', max_tokens: 8 } },
  { path: '/api/v1/ai/chat', surface: 'spec', body: { model: 'up/chat', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 } },
  { path: '/api/v1/ai/images', surface: 'spec', body: { prompt: 'a red fox', n: 1, size: '256x256' } },
  { path: '/api/v1/ai/tts', surface: 'spec', body: { text: 'Hello world', voice: 'en-us', format: 'wav' } },
  { path: '/v1/chat/completions', surface: 'openai', body: { model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 } },
  { path: '/v1/chat/completions', surface: 'openai', body: { model: 'up/chat', messages: [{ role: 'user', content: 'Hi' }], stream: true } },
  { path: '/v1/responses', surface: 'openai', body: { model: 'local/demo-bigram', input: 'Hello', max_output_tokens: 8 } },
  { path: '/v1/responses', surface: 'openai', body: { model: 'up/chat', input: [{ role: 'user', content: 'Hi' }], stream: true } },
  { path: '/v1/messages', surface: 'anthropic', body: { model: 'local/demo-bigram', max_tokens: 8, messages: [{ role: 'user', content: 'Hello' }] } },
  { path: '/v1/messages', surface: 'anthropic', body: { model: 'up/chat', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }], stream: true } },
  { path: '/v1/images/generations', surface: 'openai', body: { model: 'preview-image', prompt: 'a fox', n: 1, size: '256x256' } },
  { path: '/v1/audio/speech', surface: 'openai', body: { model: 'espeak-ng', input: 'Hello', voice: 'en-us', response_format: 'wav' } },
];

/** The sandbox faucet, fuzzed as the paid routes are (a body it takes: test USDC to an address). */
export const FAUCET_ROUTE: PaidRoute = { path: '/sandbox/faucet', surface: 'spec', body: { network: 'base', address: `0x${'ab'.repeat(20)}`, amount: '1000' } };

/** The free routes: every GET the service serves, with the ids and queries they take. */
function freeTarget(prng: Prng, known: KnownIds): string {
  return prng.pick([
    () => '/healthz',
    () => '/readyz',
    () => '/metrics',
    () => '/openapi.json',
    () => '/docs',
    () => '/',
    () => '/llms.txt',
    () => '/.well-known/x402',
    () => '/api/v1/ai/models',
    () => '/v1/models',
    () => `/v1/models/${prng.pick(['local/demo-bigram', 'up/chat', 'nope', '..%2f..', percentEncoded(junkText(prng, 40))])}`,
    () => `/media/${prng.pick([...known.media, 'x', '0'.repeat(32), junkId(prng), `${junkId(prng)}.png`])}`,
    () => `/api/v1/payments/${prng.pick([...known.payments, junkId(prng), '0x' + '0'.repeat(64), percentEncoded(junkText(prng, 30)), 'a'.repeat(400)])}`,
    () => `/api/v1/admin/payments${adminQuery(prng)}`,
    () => `/api/v1/admin/revenue${adminQuery(prng)}`,
    () => '/sandbox/balance?' + prng.pick(['network=base&address=0x' + '1'.repeat(40), 'network=nope', 'address=%00', '']),
    () => '/playground',
  ])();
}

/** Ids the fuzz has seen the service hand out (media and payments of real paid calls), to aim at real rows. */
export interface KnownIds {
  media: string[];
  payments: string[];
  /** the admin token: some admin requests carry it, so its routes' query parsing is reached */
  adminToken: string;
}

function adminQuery(prng: Prng): string {
  const parts = prng.pick([
    [],
    ['limit=5'],
    ['limit=-1'],
    ['limit=99999999999'],
    ['state=settled', 'state=failed'],
    ['network=base'],
    ['network=' + percentEncoded(junkText(prng, 10))],
    ['from=2026-13-45'],
    ['from=2026-01-01T00:00:00Z', 'to=2020-01-01'],
    ['cursor=' + percentEncoded(junkText(prng, 60))],
    ['cursor=' + 'A'.repeat(2000)],
    ['__proto__=1'],
    ['unknown=1'],
  ]);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** Every byte of the UTF-8 form percent-encoded except unreserved ones (encodeURIComponent throws on lone surrogates). */
function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0').toUpperCase()}`)).join('');
}

/** Text a client might send: ASCII, control characters, astral and combining code points, lone surrogates. */
export function junkText(prng: Prng, max: number): string {
  const length = prng.int(0, max);
  const pieces = ['a', 'Z', '0', ' ', '"', '\\', '/', '%', '\u0000', '\u001f', '\u007f', '\u00e9', '\u200b', '\u202e', '\u{1f600}', '\u0301', '\ufeff', '\ud800', '{', '}', '$', '<script>', '../', '\r\n'];
  let out = '';
  for (let i = 0; i < length; i++) out += prng.pick(pieces);
  return out;
}

function junkId(prng: Prng): string {
  return prng.string(prng.int(1, 64), 'abcdef0123456789-_.~ABCXYZ');
}

/** A value of any JSON type, sometimes large or odd, for a field that expects something else. */
function junkValue(prng: Prng, depth = 0): unknown {
  return prng.pick<() => unknown>([
    () => null,
    () => true,
    () => prng.int(-5, 5),
    () => prng.pick([0, -0, 1.5, -1, 2 ** 31, 2 ** 53 + 1, 1e21, -1e308, Number.MIN_VALUE]),
    () => junkText(prng, 20),
    () => prng.pick(['', ' ', '\u0000', 'NaN', 'Infinity', '1e3', '0x10', 'true', 'null', '__proto__']),
    () => 'x'.repeat(prng.pick([1_000, 20_000, 120_000])),
    () => (depth > 2 ? [] : Array.from({ length: prng.int(0, 4) }, () => junkValue(prng, depth + 1))),
    () => (depth > 2 ? {} : { [prng.pick(['a', 'role', 'content', 'constructor', 'toString'])]: junkValue(prng, depth + 1) }),
  ])();
}

/** A JSON text nested `depth` deep. */
function deepJson(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** A body for a paid route: its valid body with one or two things wrong, or not JSON at all. */
export function fuzzBody(prng: Prng, route: PaidRoute): string | Buffer {
  const body: Record<string, unknown> = structuredClone(route.body);
  const fields = Object.keys(body);
  return prng.pick<() => string | Buffer>([
    () => JSON.stringify(body), // valid: a 402
    () => {
      delete body[prng.pick(fields)];
      return JSON.stringify(body);
    },
    () => {
      body[prng.pick(fields)] = junkValue(prng);
      return JSON.stringify(body);
    },
    () => {
      body[prng.pick(fields)] = junkValue(prng);
      body[prng.pick(fields)] = junkValue(prng);
      return JSON.stringify(body);
    },
    () => JSON.stringify({ ...body, [prng.pick(['maxTokens', 'extra', 'stream', 'options', 'seed', 'n'])]: junkValue(prng) }),
    () => JSON.stringify({ ...body, options: { [prng.pick(['seed', 'baseURL', 'apiKey', 'headers', 'speed', 'pitch', '__proto__'])]: junkValue(prng) } }),
    // prototype pollution: JSON.stringify cannot write these keys, so they are spliced into the text
    () => JSON.stringify(body).replace(/^\{/, `{"__proto__":{"admin":true,"polluted":1},`),
    () => JSON.stringify(body).replace(/^\{/, `{"constructor":{"prototype":{"polluted":1}},`),
    () => JSON.stringify(body).replace(/\}$/, `,"messages":[{"role":"user","content":"x","__proto__":{"x":1}}]}`),
    () => JSON.stringify(body).replace(/^\{/, '{"model":"a","model":"b",'), // duplicate keys
    () => deepJson(prng.pick([64, 1_000, 20_000, 200_000]), '[', ']'),
    () => deepJson(prng.pick([64, 5_000, 100_000]), '{"a":', '}'),
    () => JSON.stringify({ ...body, [fields[0]!]: deepJson(50, '[', ']') }),
    () => prng.pick(['', ' ', 'null', 'true', '0', '"text"', '[]', '{}', '{', '}', '{"a":1,}', "{'a':1}", 'NaN', '[1,2', '\u0000']),
    () => '\ufeff' + JSON.stringify(body), // byte order mark
    () => Buffer.concat([Buffer.from('{"prompt":"'), prng.bytes(prng.int(1, 40)), Buffer.from('"}')]), // not UTF-8
    () => prng.bytes(prng.int(1, 200)),
    () => JSON.stringify({ ...body, [prng.pick(fields)]: junkText(prng, 400) }),
    () => JSON.stringify({ ...body, prompt: '\u{1f600}'.repeat(prng.pick([100, 3_000, 70_000])) }),
    () => JSON.stringify({ ...body, max_tokens: prng.pick([1e400 as number, 9007199254740993, 1.0000001, -0, '8']) }).replace('null', '1e400'),
    () => JSON.stringify({ ...body, padding: 'p'.repeat(300 * 1024) }), // over the body limit
    () => JSON.stringify({ ...body, messages: Array.from({ length: prng.pick([0, 201, 2_000]) }, () => ({ role: 'user', content: 'x' })) }),
  ])();
}

/** Headers a client may send beside the body: the network, forwarding, content type, CORS, conditional and auth headers. */
export function fuzzHeaders(prng: Prng, known: KnownIds): Record<string, string> {
  const headers: Record<string, string> = {};
  const count = prng.int(0, 3);
  for (let i = 0; i < count; i++) {
    const [name, value] = prng.pick<() => [string, string]>([
      () => ['X-Network', prng.pick(['base', 'solana', 'polygon', 'BASE', 'eip155:8453', 'eip155:1', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', ' base ', 'base,solana', '', 'x'.repeat(5_000), '__proto__'])],
      () => ['X-Forwarded-Host', prng.pick(['evil.example', 'a b', 'evil.example:99999', '', 'x'.repeat(300), '[::1]', 'host/with/path'])],
      () => ['X-Forwarded-Proto', prng.pick(['https', 'javascript', '', 'http, https', 'ftp'])],
      () => ['X-Forwarded-For', prng.pick(['1.2.3.4', '127.0.0.1, 10.0.0.1', 'not-an-ip', ''])],
      () => ['Forwarded', prng.pick(['for=1.2.3.4;host=evil.example;proto=https', 'garbage', 'host="a b"'])],
      () => ['Content-Type', prng.pick(['text/plain', 'application/json; charset=utf-16', 'application/json;charset=latin1', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/JSON', 'application/json-seq', '', '*/*', 'application/json; charset="utf-8"'])],
      () => ['Content-Encoding', prng.pick(['gzip', 'br', 'identity', 'x'])],
      () => ['Accept', prng.pick(['text/event-stream', 'application/xml', '*/*', ''])],
      () => ['Accept-Encoding', prng.pick(['gzip', 'br', 'zstd', 'x'])],
      () => ['Origin', prng.pick(['https://evil.example', 'null', ''])],
      () => ['Access-Control-Request-Method', prng.pick(['POST', 'DELETE', 'X'])],
      () => ['Access-Control-Request-Headers', prng.pick(['x-payment, payment-signature', 'x-evil', ''])],
      () => ['Range', prng.pick(['bytes=0-10', 'bytes=-5', 'bytes=10-5', 'bytes=0-0,2-3,5-', 'bytes=99999999999999999999-', 'items=0-1', 'bytes='])],
      () => ['If-None-Match', prng.pick(['*', '"x"', 'W/"x"', '"a", "b"', 'garbage'])],
      () => ['If-Range', prng.pick(['"x"', 'Tue, 24 Nov 2026 00:00:00 GMT', 'junk'])],
      () => ['Authorization', prng.pick(['Bearer ', 'Bearer x', 'Basic YTpi', `Bearer ${known.adminToken}`, `bearer ${known.adminToken}`, `Bearer ${known.adminToken}x`, 'Bearer ' + 'a'.repeat(4_000)])],
      () => ['SIGN-IN-WITH-X', prng.pick(['', 'x', Buffer.from('{"domain":"x"}').toString('base64'), Buffer.from('[]').toString('base64'), 'a'.repeat(3_000)])],
      () => ['X-Payer-Timestamp', prng.pick(['', '0', String(Math.floor(Date.now() / 1000)), '1e9', '-1', '9'.repeat(20)])],
      () => ['X-Payer-Signature', prng.pick(['', '0x', '0x' + '0'.repeat(130), 'zz'])],
      () => ['X-Request-Id', prng.pick(['abc', '', 'x'.repeat(1_000), '../../etc/passwd', '<script>'])],
      () => ['Connection', prng.pick(['keep-alive', 'close', 'upgrade'])],
      () => ['Expect', prng.pick(['100-continue', 'garbage'])],
    ])();
    headers[name] = value;
  }
  return headers;
}

/** A request-target that is not quite a route: encodings, dot segments, doubled slashes, case, length, queries. */
export function fuzzPath(prng: Prng, known: KnownIds): string {
  const real = prng.chance(0.6) ? prng.pick(PAID_ROUTES).path : freeTarget(prng, known);
  return prng.pick<() => string>([
    () => real,
    () => real.toUpperCase(),
    () => real + '/',
    () => real.replace(/\//g, '//'),
    () => real.replace(/\/([^/]*)$/, '/./$1'),
    () => real.replace(/\/([^/]*)$/, '/x/../$1'),
    () => real.replace(/\/([^/]*)$/, '/%2e%2e/$1'),
    () => real.replace(/\//g, '%2f'),
    () => real.replace('a', '%61'),
    () => real + '%00',
    () => real + '%',
    () => real + '%zz',
    () => real + '%c0%ae',
    () => real + '?' + prng.pick(['a=1', 'a=%ff', '%%%', 'x'.repeat(4_000), '__proto__[a]=1', 'network=base&network=solana']),
    () => real + '#fragment',
    () => '/' + 'a/'.repeat(prng.pick([100, 3_000])),
    () => '/' + 'x'.repeat(prng.pick([300, 8_000, 60_000])),
    () => '/api/v1/ai/' + percentEncoded(junkText(prng, 20)),
    () => '/media/' + '..%2f'.repeat(5) + 'etc/passwd',
    () => '/media/%2e%2e/%2e%2e/package.json',
    () => '/docs/assets/' + prng.pick(['..%2f..%2fpackage.json', 'x.js', '%00.css']),
    () => '/playground/assets/' + prng.pick(['..%2fapp.js', 'app.js%00']),
  ])();
}

/** Methods, in case and spelling fetch would not send. */
export function fuzzMethod(prng: Prng): string {
  return prng.pick(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO', 'post', 'GeT', 'CONNECT', 'M-SEARCH']);
}

/** Methods fetch sends (it refuses CONNECT, TRACE, TRACK outright, and upper-cases only the standard ones). */
export function fetchable(method: string): boolean {
  return !['CONNECT', 'TRACE', 'TRACK'].includes(method.toUpperCase());
}

/** An HTTP/1.1 request as bytes: `Host` and `Content-Length` as given (or right, when not given), Connection: close. */
export function requestBytes(method: string, target: string, headers: Record<string, string>, body: string | Buffer = ''): Buffer {
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`${method} ${target} HTTP/1.1`];
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  if (!names.has('host')) lines.push('Host: 127.0.0.1');
  if (!names.has('content-length') && !names.has('transfer-encoding') && payload.length > 0) lines.push(`Content-Length: ${payload.length}`);
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (!names.has('connection')) lines.push('Connection: close');
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), payload]);
}

/** Requests only a socket can send: bad Host, bare CR, backslashes, lying lengths, bad chunking, oversized heads. */
export function fuzzRawRequest(prng: Prng): FuzzRequest {
  const route = prng.pick(PAID_ROUTES);
  const json = JSON.stringify(route.body);
  const post = (headers: Record<string, string>, body: string | Buffer = json, target = route.path) =>
    requestBytes('POST', target, { 'Content-Type': 'application/json', ...headers }, body);
  const variants: (() => [string, Buffer | string, boolean?])[] = [
    () => ['Host with a space', post({ Host: 'a b' })],
    () => ['Host with a slash', post({ Host: 'evil.example/x?y' })],
    () => ['Host empty', post({ Host: '' })],
    () => ['two Hosts', post({ Host: 'a' }).toString('latin1').replace('Host: a', 'Host: a\r\nHost: b')],
    () => ['Host unicode', Buffer.concat([Buffer.from(`GET /healthz HTTP/1.1\r\nHost: `), Buffer.from('\u00e9\u{1f600}'), Buffer.from('\r\nConnection: close\r\n\r\n')])],
    () => ['backslashes', requestBytes('GET', prng.pick(['/a\\b', '\\healthz', '/media\\..\\x', '/api\\v1\\ai\\chat']), {})],
    () => ['bare CR in target', Buffer.from(`GET /healthz\rX HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`)],
    () => ['bare CR in header', Buffer.from(`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Network: base\rX-Evil: 1\r\nConnection: close\r\n\r\n`)],
    () => ['bare LF lines', Buffer.from(`GET /healthz HTTP/1.1\nHost: a\nConnection: close\n\n`)],
    () => ['space in target', requestBytes('GET', '/hea lthz', {})],
    () => ['absolute-form target', requestBytes('GET', 'http://evil.example/healthz', {})],
    () => ['asterisk target', requestBytes('OPTIONS', '*', {})],
    () => ['tab in header value', post({ 'X-Network': 'ba\tse' })],
    () => ['NUL in header value', Buffer.from(`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Network: ba\u0000se\r\nConnection: close\r\n\r\n`, 'latin1')],
    () => ['header without colon', Buffer.from(`GET /healthz HTTP/1.1\r\nHost: a\r\nGarbage\r\nConnection: close\r\n\r\n`)],
    () => ['obsolete line folding', Buffer.from(`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Network: base\r\n  folded\r\nConnection: close\r\n\r\n`)],
    () => ['Content-Length shorter than the body', post({ 'Content-Length': String(Math.max(0, json.length - 5)) })],
    () => ['Content-Length longer than the body', post({ 'Content-Length': String(json.length + 100) }), true],
    () => ['Content-Length not a number', post({ 'Content-Length': prng.pick(['abc', '-1', '1e3', '99999999999999999999', ' 5']) })],
    () => ['two Content-Lengths', post({ 'Content-Length': `${json.length}, ${json.length + 1}` })],
    () => ['Content-Length and chunked', post({ 'Content-Length': String(json.length), 'Transfer-Encoding': 'chunked' })],
    () => ['bad chunk size', post({ 'Transfer-Encoding': 'chunked' }, `zz\r\n${json}\r\n0\r\n\r\n`)],
    () => ['chunk cut short', post({ 'Transfer-Encoding': 'chunked' }, `${(json.length + 50).toString(16)}\r\n${json}`), true],
    () => ['valid chunked', post({ 'Transfer-Encoding': 'chunked' }, `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`)],
    () => ['unknown transfer coding', post({ 'Transfer-Encoding': 'gzip, chunked' }, `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`)],
    () => ['oversized header', requestBytes('GET', '/healthz', { 'X-Big': 'a'.repeat(prng.pick([17_000, 70_000])) })],
    () => ['many headers', requestBytes('GET', '/healthz', Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`X-H${i}`, 'v'])))],
    () => ['HTTP/1.0 without Host', Buffer.from(`GET /healthz HTTP/1.0\r\n\r\n`)],
    () => ['HTTP/2.0 on HTTP/1', Buffer.from(`GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n`)],
    () => ['HTTP/9.9', Buffer.from(`GET /healthz HTTP/9.9\r\nHost: a\r\n\r\n`)],
    () => ['lower-case method', post({}).toString('latin1').replace(/^POST/, 'post')],
    () => ['TRACE', requestBytes('TRACE', route.path, {})],
    () => ['CONNECT', requestBytes('CONNECT', '127.0.0.1:80', {})],
    () => ['upgrade to websocket', requestBytes('GET', '/healthz', { Upgrade: 'websocket', Connection: 'Upgrade' })],
    () => ['upgrade to h2c', requestBytes('GET', '/healthz', { Upgrade: 'h2c', Connection: 'Upgrade, HTTP2-Settings', 'HTTP2-Settings': 'AAMAAABkAARAAAAAAAIAAAAA' })],
    () => ['Expect 100-continue', post({ Expect: '100-continue' })],
    () => ['pipelined junk after a request', Buffer.concat([requestBytes('GET', '/healthz', { Connection: 'keep-alive' }), Buffer.from('GARBAGE\r\n\r\n')])],
    () => ['random bytes', prng.bytes(prng.int(1, 300))],
    () => ['request smuggling attempt', Buffer.from(`POST ${route.path} HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n`)],
  ];
  const [label, raw, mayGoUnanswered] = prng.pick(variants)();
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw;
  return { label: `raw: ${label}`, surface: route.surface, method: 'RAW', path: route.path, headers: {}, raw: bytes, ...(mayGoUnanswered ? { mayGoUnanswered } : {}) };
}

/**
 * JSON Schemas built to cost a schema reader time or memory (issue 36): patterns that make a backtracking engine
 * take exponential time, $ref fan-outs that inline to millions of nodes, huge enums, deep nesting, wide objects,
 * and answers that can never fit max_tokens.
 */
export function adversarialSchema(prng: Prng): { label: string; schema: Record<string, unknown> } {
  const fanOut = (width: number, levels: number) => {
    const defs: Record<string, unknown> = {};
    for (let level = 0; level < levels; level++) {
      const properties = Object.fromEntries(Array.from({ length: width }, (_, i) => [`k${i}`, level === levels - 1 ? { type: 'string' } : { $ref: `#/$defs/l${level + 1}` }]));
      defs[`l${level}`] = { type: 'object', properties, required: Object.keys(properties) };
    }
    return { $ref: '#/$defs/l0', $defs: defs };
  };
  const nested = (depth: number) => JSON.parse(`${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`) as Record<string, unknown>;
  const backtracking = ['^[0-9-]{8}([0-9-]+)+x$', '^(a+)+$', '^(a|aa)+b$', '(x+x+)+y', '^(([a-z])+.)+[A-Z]([a-z])+$', '(?=(a+)+b)a', '^(\\w+\\s?)*$'];
  return prng.pick<() => { label: string; schema: Record<string, unknown> }>([
    () => {
      const pattern = prng.pick(backtracking);
      return { label: `backtracking pattern ${pattern}`, schema: { type: 'object', properties: { code: { type: 'string', pattern } }, required: ['code'] } };
    },
    () => ({ label: 'patternProperties that backtrack', schema: { type: 'object', patternProperties: { [prng.pick(backtracking)]: { type: 'string' } } } }),
    () => {
      const [width, levels] = prng.pick([[50, 4], [80, 5], [120, 6]] as const);
      return { label: `$ref fan-out ${width}x${levels}`, schema: fanOut(width, levels) };
    },
    () => ({ label: 'recursive $ref', schema: { $ref: '#/$defs/a', $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/a' }, c: { anyOf: [{ $ref: '#/$defs/a' }, { $ref: '#' }] } }, required: ['b', 'c'] } } } }),
    () => ({ label: 'huge enum', schema: { type: 'object', properties: { v: { enum: Array.from({ length: prng.pick([5_000, 15_000]) }, (_, i) => `v${i}`) } }, required: ['v'] } }),
    () => ({ label: 'deep nesting', schema: nested(prng.pick([65, 500, 1_000])) }),
    () => ({ label: 'wide object', schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`p${i}`, { type: 'integer' }])) } }),
    () => ({ label: 'answer longer than max_tokens', schema: { type: 'object', properties: { items: { type: 'array', minItems: 16, items: { type: 'string', minLength: 100 } } }, required: ['items'] } }),
    () => ({ label: 'allOf of anyOfs', schema: { allOf: Array.from({ length: 8 }, (_, i) => ({ anyOf: Array.from({ length: 8 }, (_, j) => ({ type: 'object', properties: { [`a${i}${j}`]: { type: 'string' } } })) })) } }),
  ])();
}

/** The chat surfaces a client's JSON Schema reaches, each in its own field, for the embedded model. */
export function fuzzSchemaRequest(prng: Prng, model = 'local/demo-bigram'): FuzzRequest {
  const { label, schema } = adversarialSchema(prng);
  const messages = [{ role: 'user', content: 'Hi' }];
  const json = { 'Content-Type': 'application/json', 'X-Network': 'base' };
  const post = (path: string, surface: Surface, body: unknown): FuzzRequest => ({ label: `schema on ${path}: ${label}`, surface, method: 'POST', path, headers: json, body: JSON.stringify(body) });
  return prng.pick<() => FuzzRequest>([
    () => post('/v1/chat/completions', 'openai', { model, messages, max_tokens: 64, tools: [{ type: 'function', function: { name: 'f', parameters: schema } }], tool_choice: 'required' }),
    () => post('/v1/chat/completions', 'openai', { model, messages, max_tokens: 64, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } } }),
    () => post('/v1/responses', 'openai', { model, input: 'Hi', max_output_tokens: 64, tools: [{ type: 'function', name: 'f', parameters: schema }], tool_choice: 'required' }),
    () => post('/v1/responses', 'openai', { model, input: 'Hi', max_output_tokens: 64, text: { format: { type: 'json_schema', name: 'answer', schema } } }),
    () => post('/v1/messages', 'anthropic', { model, max_tokens: 64, messages, tools: [{ name: 'f', input_schema: { type: 'object', ...schema } }], tool_choice: { type: 'any' } }),
    // the spec route and MCP's chat tool take no schema: one sent in `options` is refused as an option
    () => post('/api/v1/ai/chat', 'spec', { model, prompt: 'Hi', options: { schema: JSON.stringify(schema).slice(0, 50_000) } }),
    () => ({
      ...post('/mcp', 'mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chat', arguments: { model, prompt: 'Hi', options: { schema: JSON.stringify(schema).slice(0, 50_000) }, network: 'base' } } }),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' },
    }),
  ])();
}
