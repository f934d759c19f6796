// Child process of the bench: the mock OpenAI-compatible upstream gateway benchmarks measure against, as lean as
// a mock can be so that its own cost weighs little on a 2-core machine. POST /v1/chat/completions answers at once:
// a chat.completion with CHAT_TEXT and CHAT_USAGE (test/support/openai-upstream.ts, the tests' upstream), or, with
// `stream: true`, that upstream's server-sent chunks, the role and the first word written on their own before the
// rest (a model's first token, then the others). Prints {"url"} once listening; stops when stdin closes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHAT_PATH, CHAT_TEXT, CHAT_USAGE, chatChunks } from '../test/support/openai-upstream.ts';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== CHAT_PATH) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
    const model = body.model ?? 'unknown';
    if (body.stream === true) {
      const [role, first, ...rest] = chatChunks(model, body.stream_options?.include_usage === true);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write(`${role}${first}`);
      res.end(rest.join(''));
      return;
    }
    const payload = JSON.stringify({
      id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: CHAT_TEXT }, finish_reason: 'stop', logprobs: null }],
      usage: CHAT_USAGE,
    });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
    res.end(payload);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pid: process.pid })}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
