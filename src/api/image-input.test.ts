import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../errors.ts';
import { imageDownloader, imageInput } from './image-input.ts';
import { createNodeHttpFetch } from '../lib/node-http-fetch.ts';
import { guardOtherOrigins, publicOnlyLookup } from '../providers/openai-compatible/public-address.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let server: Server;
let origin = '';
const released: Array<() => void> = [];
before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/ok.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
    else if (req.url === '/big.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(Buffer.alloc(2048));
    else if (req.url === '/page') res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>');
    else if (req.url === '/slow.png') released.push(() => res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  for (const release of released) release();
  server.closeAllConnections();
  server.close();
});

const refusal = (field: string, message: RegExp) => (error: unknown) => error instanceof ApiError && error.status === 400 && error.field === field && message.test(error.message);

test('a data URL is decoded at once; its type must be an image type', () => {
  const { image, mediaType } = imageInput(`data:image/png;base64,${PNG.toString('base64')}`, 'messages[0].content[1]');
  assert.equal(mediaType, 'image/png');
  assert.deepEqual(Buffer.from(image as Uint8Array), PNG);
  assert.throws(() => imageInput('data:text/plain;base64,aGk=', 'f'), refusal('f', /not an accepted image type/));
  assert.throws(() => imageInput('data:image/png,rawbytes', 'f'), refusal('f', /base64/));
  assert.throws(() => imageInput('file:///etc/passwd', 'f'), refusal('f', /only data: and http\(s\)/));
  assert.ok(imageInput('https://example.com/a.png', 'f').image instanceof URL);
});

test('a remote image is fetched within its bounds: an image type, a size cap, a time limit', async () => {
  const download = imageDownloader(fetch, { maxBytes: 1024, timeoutMs: 300, fieldOf: () => 'messages[0].content[1]' });
  const [ok] = await download([{ url: new URL(`${origin}/ok.png`), isUrlSupportedByModel: false }]);
  assert.deepEqual(ok, { data: new Uint8Array(PNG), mediaType: 'image/png' });
  const field = 'messages[0].content[1]';
  await assert.rejects(async () => download([{ url: new URL(`${origin}/big.png`), isUrlSupportedByModel: false }]), refusal(field, /exceeds the 1024-byte limit/));
  await assert.rejects(async () => download([{ url: new URL(`${origin}/page`), isUrlSupportedByModel: false }]), refusal(field, /text\/html/));
  await assert.rejects(async () => download([{ url: new URL(`${origin}/missing.png`), isUrlSupportedByModel: false }]), refusal(field, /404/));
  await assert.rejects(async () => download([{ url: new URL(`${origin}/slow.png`), isUrlSupportedByModel: false }]), refusal(field, /no answer within 300 ms/));
});

test('through the public-only fetch the gateway uses, a private address is refused', async () => {
  const publicOnly = createNodeHttpFetch({ lookup: publicOnlyLookup() });
  const guarded = guardOtherOrigins('null', publicOnly, publicOnly);
  const download = imageDownloader(guarded);
  await assert.rejects(async () => download([{ url: new URL(`${origin}/ok.png`), isUrlSupportedByModel: false }]), refusal('messages', /non-public address/));
  await assert.rejects(async () => download([{ url: new URL(`http://localhost:${new URL(origin).port}/ok.png`), isUrlSupportedByModel: false }]), refusal('messages', /non-public address/));
});
