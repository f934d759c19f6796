// Child process of the bench: a bare node:http server replaying captured responses byte for byte.
// argv[2] is a JSON file { "<path>": { status, headers, body (base64) } }. It reads the request body
// to its end (as the gateway must) and answers with the captured status, headers and body.
// Prints one JSON line {"url", "pid"} on stdout; stops when stdin closes or on SIGTERM/SIGINT.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Captured } from './captured-answer.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: bare.ts <captured.json>');
const captured = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Captured>;
const routes = new Map(
  Object.entries(captured).map(([path, c]) => [path, { status: c.status, headers: c.headers, body: Buffer.from(c.body, 'base64') }]),
);

const server = createServer((req, res) => {
  const route = routes.get(req.url ?? '');
  req.on('data', () => undefined);
  req.on('end', () => {
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(route.status, route.headers);
    res.end(route.body);
  });
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid })}\n`);
});

let stopping = false;
function shutdown(): void {
  if (stopping) return;
  stopping = true;
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.stdin.on('end', shutdown);
process.stdin.on('close', shutdown);
process.stdin.resume();
