// Child process of bench/proxy.ts: the least a Node relay can do, the floor any proxy written on node:http stands
// on. It reads a request whole, sends it to argv[2] over a kept-alive connection and pipes the answer back: no
// routes, no payment, no header rules. Prints "listening on <url>" once listening; stops on SIGTERM.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const target = new URL(process.argv[2] ?? '');
const agent = new Agent({ keepAlive: true });
const server = createServer((incoming, outgoing) => {
  const chunks: Buffer[] = [];
  incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
  incoming.on('end', () => {
    const body = Buffer.concat(chunks);
    const headers = { ...incoming.headers, host: target.host, 'content-length': String(body.length) };
    const sent = request({ agent, hostname: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    sent.on('error', () => outgoing.destroy());
    sent.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
