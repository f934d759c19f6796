// GET /media/:id through Hono's app.request(), over both stores: headers, conditional and range requests,
// and ids that are not ids (traversal, encoded slashes, absolute paths) answered 404.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { pino } from 'pino';
import { mediaRoutes } from './media-route.ts';
import type { MediaInfo, MediaStore } from './media-store.ts';
import { renderError } from '../http/render-error.ts';
import { openFileStore, openS3Store, type OpenedStore } from '../../test/support/media-stores.ts';

function routeSuite(name: string, open: () => Promise<OpenedStore>): void {
  describe(`GET /media/:id (${name})`, () => {
    let opened: OpenedStore;
    let store: MediaStore;
    let app: Hono;
    let media: MediaInfo;
    const bytes = randomBytes(5000);
    before(async () => {
      opened = await open();
      store = opened.store;
      app = new Hono();
      app.route('/', mediaRoutes(store));
      const log = pino({ level: 'silent' });
      app.onError((error, c) => renderError(error, c, log));
      media = await store.put(bytes, 'audio/wav');
    });
    after(() => opened.close());

    test('the whole file with its type, length, strong ETag and immutable caching', async () => {
      const response = await app.request(`/media/${media.id}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'audio/wav');
      assert.equal(response.headers.get('content-length'), '5000');
      assert.equal(response.headers.get('etag'), `"${media.sha256}"`);
      assert.match(response.headers.get('cache-control') ?? '', /immutable/);
      assert.match(response.headers.get('cache-control') ?? '', /max-age=31536000/);
      assert.equal(response.headers.get('accept-ranges'), 'bytes');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), bytes);
    });

    test('HEAD: the headers of the GET, and the bytes are never opened (Hono would drop them unread)', async () => {
      let reads = 0;
      const counting: MediaStore = Object.assign(Object.create(store) as MediaStore, {
        read: (...args: Parameters<MediaStore['read']>) => (reads++, store.read(...args)),
      });
      const headApp = new Hono().route('/', mediaRoutes(counting));
      for (const [headers, status, length] of [[{}, 200, '5000'], [{ Range: 'bytes=10-19' }, 206, '10']] as const) {
        const response = await headApp.request(`/media/${media.id}`, { method: 'HEAD', headers });
        assert.equal(response.status, status);
        assert.equal(response.headers.get('content-length'), length);
        assert.equal(response.headers.get('content-type'), 'audio/wav');
        assert.equal(response.headers.get('etag'), `"${media.sha256}"`);
        assert.equal((await response.arrayBuffer()).byteLength, 0);
      }
      assert.equal(reads, 0);
      assert.equal((await (await headApp.request(`/media/${media.id}`)).arrayBuffer()).byteLength, 5000);
      assert.equal(reads, 1, 'GET still reads');
    });

    test('If-None-Match matching (weak comparison, lists, *): 304 with ETag and Cache-Control, no body', async () => {
      const etag = `"${media.sha256}"`;
      for (const method of ['GET', 'HEAD']) {
        for (const header of [etag, `W/${etag}`, `"abc", ${etag}`, '*']) {
          const response = await app.request(`/media/${media.id}`, { method, headers: { 'If-None-Match': header } });
          const what = `${method} If-None-Match: ${header}`;
          assert.equal(response.status, 304, what);
          assert.equal(response.headers.get('etag'), etag, what);
          assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable', what);
          assert.equal(response.headers.get('content-type'), null, what);
          assert.equal((await response.arrayBuffer()).byteLength, 0, what);
        }
      }
      for (const header of ['"something-else"', `W/"something-else", "${media.sha256.slice(1)}"`]) {
        const other = await app.request(`/media/${media.id}`, { headers: { 'If-None-Match': header } });
        assert.equal(other.status, 200, header);
        assert.deepEqual(Buffer.from(await other.arrayBuffer()), bytes, header);
      }
    });

    test('If-None-Match is evaluated before Range: a match is a 304 even with a Range', async () => {
      const response = await app.request(`/media/${media.id}`, { headers: { 'If-None-Match': `W/"${media.sha256}"`, Range: 'bytes=0-9' } });
      assert.equal(response.status, 304);
      assert.equal(response.headers.get('content-range'), null);
      assert.equal((await response.arrayBuffer()).byteLength, 0);
      const miss = await app.request(`/media/${media.id}`, { headers: { 'If-None-Match': '"old"', Range: 'bytes=0-9' } });
      assert.equal(miss.status, 206);
      assert.deepEqual(Buffer.from(await miss.arrayBuffer()), bytes.subarray(0, 10));
    });

    test('If-Range: the Range is honoured for the strong ETag only, else the whole file is a 200', async () => {
      const etag = `"${media.sha256}"`;
      const partial = await app.request(`/media/${media.id}`, { headers: { 'If-Range': etag, Range: 'bytes=10-19' } });
      assert.equal(partial.status, 206);
      assert.deepEqual(Buffer.from(await partial.arrayBuffer()), bytes.subarray(10, 20));
      for (const ifRange of [`W/${etag}`, '"abc"', 'Wed, 21 Oct 2015 07:28:00 GMT']) {
        const whole = await app.request(`/media/${media.id}`, { headers: { 'If-Range': ifRange, Range: 'bytes=10-19' } });
        assert.equal(whole.status, 200, ifRange);
        assert.equal(whole.headers.get('content-range'), null, ifRange);
        assert.equal(whole.headers.get('content-length'), '5000', ifRange);
        assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes, ifRange);
      }
      const unsatisfiable = await app.request(`/media/${media.id}`, { headers: { 'If-Range': '"abc"', Range: 'bytes=9000-' } });
      assert.equal(unsatisfiable.status, 200, 'an ignored Range cannot be unsatisfiable');
      await unsatisfiable.arrayBuffer();
    });

    test('Range: 206 with Content-Range and exactly those bytes', async () => {
      for (const [header, start, end] of [
        ['bytes=100-199', 100, 199],
        ['bytes=4990-', 4990, 4999],
        ['bytes=-10', 4990, 4999],
        ['bytes=0-0', 0, 0],
        ['bytes=4000-99999', 4000, 4999],
      ] as const) {
        const response = await app.request(`/media/${media.id}`, { headers: { Range: header } });
        assert.equal(response.status, 206, header);
        assert.equal(response.headers.get('content-range'), `bytes ${start}-${end}/5000`, header);
        assert.equal(response.headers.get('content-length'), String(end - start + 1), header);
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), bytes.subarray(start, end + 1), header);
      }
    });

    test('an unsatisfiable range: 416 with the size, as a JSON error', async () => {
      for (const header of ['bytes=5000-', 'bytes=6000-7000', 'bytes=10-5']) {
        const response = await app.request(`/media/${media.id}`, { headers: { Range: header } });
        assert.equal(response.status, 416, header);
        assert.equal(response.headers.get('content-range'), 'bytes */5000', header);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/, header);
        assert.equal(response.headers.get('cache-control'), null, 'an error is not cached as immutable');
        assert.deepEqual(await response.json(), {
          error: 'the Range selects no byte of this media (5000 bytes)',
          code: 'range_not_satisfiable',
          field: 'Range',
        });
      }
    });

    test('unknown ids and path tricks: 404', async () => {
      const paths = [
        '/media/AAAAAAAAAAAAAAAAAAAAAA.png',
        '/media/nope',
        '/media/../..',
        '/media/../../etc/passwd',
        '/media/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
        '/media/%2e%2e/%2e%2e/etc/passwd',
        '/media/..%2f..%2fetc%2fpasswd',
        `/media/..%2F${media.id}`,
        `/media/x%2F..%2F${media.id}`,
        '/media/%2Fetc%2Fpasswd',
        '/media//etc/passwd',
        '/media/C:%5Cwindows%5Cwin.ini',
        `/media/${media.id}.json`,
        `/media/${media.id}%00`,
      ];
      for (const path of paths) {
        const response = await app.request(path);
        assert.equal(response.status, 404, path);
        const text = await response.text();
        assert.ok(!text.includes('root:'), path);
      }
      const json = await (await app.request('/media/AAAAAAAAAAAAAAAAAAAAAA.png')).json();
      assert.deepEqual(json, { error: 'no such media', code: 'not_found' });
    });
  });
}

routeSuite('file store', openFileStore);
routeSuite('S3 store', () => openS3Store());
