import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { limitedFetch, UpstreamResponseTooLargeError, UpstreamUrlRejectedError } from './limited-fetch.ts';

let server: Server;
let url: string;
before(async () => {
  server = createServer((req, res) => {
    const size = Number(new URL(req.url!, 'http://x').searchParams.get('size'));
    if (req.url!.startsWith('/gzip')) {
      const packed = gzipSync(Buffer.alloc(size)); // a few dozen bytes declared, `size` bytes once fetch inflates them
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip', 'Content-Length': String(packed.length) });
      res.end(packed);
      return;
    }
    if (req.url!.startsWith('/chunked')) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }); // no Content-Length
      for (let sent = 0; sent < size; sent += 1000) res.write(Buffer.alloc(Math.min(1000, size - sent)));
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) });
    res.end(Buffer.alloc(size));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('responses within the cap pass through unchanged', async () => {
  const response = await limitedFetch(10_000)(`${url}/fixed?size=10000`);
  assert.equal(response.status, 200);
  assert.equal((await response.arrayBuffer()).byteLength, 10_000);
  const chunked = await limitedFetch(10_000)(`${url}/chunked?size=10000`);
  assert.equal((await chunked.arrayBuffer()).byteLength, 10_000);
});

test('a declared length over the cap is refused before the body is read', async () => {
  await assert.rejects(limitedFetch(1000)(`${url}/fixed?size=5000`), UpstreamResponseTooLargeError);
});

test('an undeclared body fails once it passes the cap', async () => {
  const response = await limitedFetch(4500)(`${url}/chunked?size=20000`);
  await assert.rejects(response.arrayBuffer(), (error: Error) => error instanceof UpstreamResponseTooLargeError || /limit/.test(String(error.cause ?? error)));
});

test('a compressed body is counted as inflated, whatever its declared length', async () => {
  const within = await limitedFetch(10_000)(`${url}/gzip?size=10000`);
  assert.equal((await within.arrayBuffer()).byteLength, 10_000);
  const response = await limitedFetch(4500)(`${url}/gzip?size=20000`);
  await assert.rejects(response.arrayBuffer(), (error: Error) => error instanceof UpstreamResponseTooLargeError || /limit/.test(String(error.cause ?? error)));
});

test('only http and https', async () => {
  for (const bad of ['file:///etc/passwd', 'data:image/png;base64,AAAA', 'ftp://example.com/x.png', 'not a url']) {
    await assert.rejects(limitedFetch(1000)(bad), UpstreamUrlRejectedError, bad);
  }
});
