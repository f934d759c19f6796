// Large request bodies held at once have a ceiling (bodyMemoryLimitBytes; src/http/body-budget.ts): clients that
// send many large bodies slowly get a 503 with Retry-After, in their surface's error shape, instead of making the
// process hold every body until it runs out of memory. Here the chat surfaces take 1 MiB bodies and the ceiling
// is 2 MiB: two slow 1 MiB bodies fill it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { loadConfig } from '../src/config/load.ts';
import { postJson, startTestService } from './support/service.ts';
import type { RunningService } from '../src/service.ts';

const MiB = 1024 * 1024;
let service: RunningService;
before(async () => {
  service = await startTestService({ config: { chatBodyLimitBytes: MiB, bodyMemoryLimitBytes: 2 * MiB } });
});
after(() => service?.stop());

/** A chat body of exactly `bytes` bytes. */
function chatBody(bytes: number): string {
  const empty = JSON.stringify({ model: 'local/demo-bigram', messages: [{ role: 'user', content: '' }] });
  return JSON.stringify({ model: 'local/demo-bigram', messages: [{ role: 'user', content: 'a'.repeat(bytes - empty.length) }] });
}

/** A request whose head the service has taken (it answered 100 Continue), with half its body sent. */
async function slowUpload(body: string): Promise<{ socket: Socket; finish(): Promise<string> }> {
  const url = new URL(service.url);
  const socket = connect(Number(url.port), url.hostname);
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  while (!received.includes('100 Continue')) await once(socket, 'data');
  socket.write(body.slice(0, body.length / 2));
  return {
    socket,
    async finish() {
      socket.end(body.slice(body.length / 2));
      await once(socket, 'close');
      return received.slice(received.indexOf('\r\n\r\n') + 4);
    },
  };
}

test('past the ceiling a large body is refused with 503 and Retry-After, a small one never; freed bytes are taken again', async () => {
  const first = await slowUpload(chatBody(MiB));
  const second = await slowUpload(chatBody(MiB));

  const refused = await postJson(`${service.url}/v1/chat/completions`, chatBody(100 * 1024));
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('retry-after'), '1');
  const error = (await refused.json()) as { error: { message: string; type: string } };
  assert.match(error.error.message, /nothing was charged, retry shortly/, 'the OpenAI error shape, on the OpenAI surface');

  const small = await postJson(`${service.url}/api/v1/ai/chat`, { model: 'local/demo-bigram', prompt: 'Hello' }, { 'X-Network': 'base' });
  assert.equal(small.status, 402, 'a small body is not counted');

  // the first upload ends: its answer comes once its body was read, and by then its bytes are free again
  assert.match(await first.finish(), /^HTTP\/1\.1 (?!503)\d{3} /m);
  const taken = await postJson(`${service.url}/v1/chat/completions`, chatBody(100 * 1024));
  assert.notEqual(taken.status, 503);
  await taken.arrayBuffer();
  second.socket.destroy();
});

test('a ceiling below the largest body a route takes stops startup, naming the settings', () => {
  assert.throws(
    () => loadConfig({}, { chatBodyLimitBytes: 8 * MiB, bodyMemoryLimitBytes: 4 * MiB }),
    (error: Error) => /bodyMemoryLimitBytes \(4194304\) is below .*chatBodyLimitBytes 8388608/.test(error.message),
  );
});
