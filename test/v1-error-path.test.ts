// The /v1 routes go through the same error path as the spec routes (http/render-error.ts): an upstream failure
// is logged as a warning naming the failure, without the prompt, the request body or what the upstream sent back;
// a client that hangs up is a quiet 499 in the metrics, never an "unhandled error" 500. Read from the service's
// own log lines and /metrics.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { capturedLogger, postJson, startTestService } from './support/service.ts';
import { fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_PATH, startOpenAIUpstream, upstreamChatConfig, type OpenAIUpstream } from './support/openai-upstream.ts';
import { until } from './support/sse.ts';
import type { PaymentRequirements } from '../src/x402/types.ts';
import type { RunningService } from '../src/service.ts';

const PROMPT = 'my secret diary entry about zebras';
const GENERATED = 'generated words about penguins';
const captured = capturedLogger('debug');
let upstream: OpenAIUpstream;
let service: RunningService;

before(async () => {
  upstream = await startOpenAIUpstream();
  service = await startTestService({
    log: captured.log,
    config: {
      ...upstreamChatConfig(upstream.baseURL, { price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } }),
    },
  });
});
after(async () => {
  await service.stop();
  await upstream.close();
});

async function metricLines(): Promise<string[]> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith('http_requests_total{'));
}

test('an upstream failure on /v1 is a 502 in OpenAI\'s shape, logged as a warning without the prompt, the body or the upstream\'s content', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const body = { model: 'up/chat', messages: [{ role: 'user', content: PROMPT }] };
  const quote = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-Network': 'base' });
  assert.equal(quote.status, 402);
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
  upstream.fail(CHAT_PATH, { kind: 'status', status: 400, body: { error: { message: 'bad request', partial: GENERATED } } });
  const response = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453) });
  assert.equal(response.status, 502);
  const answer = (await response.json()) as { error: { type: string; code: string; message: string } };
  assert.equal(answer.error.type, 'api_error');
  assert.equal(answer.error.code, 'upstream_error');

  const failure = await until('the failure\'s log line', () =>
    captured.lines.find((line) => line.level === 40 && typeof line.msg === 'string' && line.msg.includes('failed')),
  );
  assert.ok(failure.reqId, 'the line names the request');
  assert.ok(failure.cause, 'and what failed (describeError)');
  const logged = JSON.stringify(captured.lines);
  assert.ok(!logged.includes('zebras'), 'no prompt in the logs');
  assert.ok(!logged.includes('penguins'), 'no upstream content in the logs');
  assert.ok(!logged.includes('requestBodyValues') && !logged.includes('"messages"'), 'no request body in the logs');
  assert.ok(!captured.lines.some((line) => line.level === 50), 'nothing at error level');
});

test('a model failing mid-stream on /v1 ends the stream with an error event, and is logged by the same rule', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const body = { model: 'up/chat', messages: [{ role: 'user', content: PROMPT }], stream: true };
  const quote = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-Network': 'base' });
  const requirement = ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts.find((offer) => offer.scheme === 'exact')!;
  upstream.fail(CHAT_PATH, { kind: 'stream-cut', afterChunks: 3 });
  const logged = captured.lines.length;
  const response = await postJson(`${service.url}/v1/chat/completions`, body, { 'X-PAYMENT': await signEvmProof(buyer, requirement, 8453) });
  assert.equal(response.status, 200);
  const events = (await response.text()).split('\n\n').filter(Boolean);
  const last = JSON.parse(events.at(-1)!.slice('data: '.length)) as { error: { type: string; code: string } };
  assert.deepEqual([last.error.type, last.error.code], ['api_error', 'upstream_error']);

  const line = await until('the failure\'s log line', () => captured.lines.slice(logged).find((l) => l.level === 40 && l.reqId !== undefined));
  assert.ok(line.cause);
  const since = JSON.stringify(captured.lines.slice(logged));
  assert.ok(!since.includes('zebras') && !since.includes('"messages"'), 'no prompt, no body');
  assert.ok(!captured.lines.slice(logged).some((l) => l.level === 50));
});

test('a client hanging up mid-upload on /v1 is a quiet 499 in the metrics, not an unhandled 500', async () => {
  const { port } = new URL(service.url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  // Expect: 100-continue makes the server say when the request reached the app: then the client leaves mid-body
  socket.write(
    'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n',
  );
  await new Promise<void>((resolve) => socket.once('data', (chunk: Buffer) => (assert.match(chunk.toString(), /^HTTP\/1\.1 100/), resolve())));
  socket.write(`{"model":"up/chat","messages":[{"role":"user","content":"${PROMPT}`);
  socket.destroy();

  const closed = await until('the 499 in /metrics', async () =>
    (await metricLines()).find((line) => line.includes('route="/v1/chat/completions"') && line.includes('status="499"')),
  );
  assert.ok(Number(closed.split(' ').at(-1)) >= 1);
  assert.ok(!(await metricLines()).some((line) => line.includes('status="500"')), 'no 500 counted');
  const quiet = captured.lines.find((line) => line.msg === 'client closed the request');
  assert.equal(quiet?.level, 20, 'logged at debug level');
  assert.ok(!captured.lines.some((line) => line.msg === 'unhandled error' || line.level === 50));
  assert.ok(!JSON.stringify(captured.lines).includes('zebras'));
});
