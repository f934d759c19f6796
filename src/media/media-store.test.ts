// One contract, every store: the same suite runs against FileMediaStore (a temp dir) and S3MediaStore (an
// s3rver started here on 127.0.0.1 over a temp dir).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { isMediaId, type MediaStore } from './media-store.ts';
import { openFileStore, openS3Store } from '../../test/support/media-stores.ts';

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(stream).arrayBuffer());
}

/** waits until the next whole second has begun, and returns its start: older than it is "before" */
async function nextSecond(): Promise<Date> {
  const wait = 1000 - (Date.now() % 1000) + 20;
  await new Promise((resolve) => setTimeout(resolve, wait));
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

function mediaStoreSuite(name: string, open: () => Promise<{ store: MediaStore; close(): Promise<void> }>): void {
  describe(name, () => {
    let store: MediaStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await open());
    });
    after(() => close());

    const bytes = randomBytes(5000);

    test('put returns the info; info reads it back', async () => {
      const put = await store.put(bytes, 'image/png');
      assert.ok(isMediaId(put.id), put.id);
      assert.ok(put.id.endsWith('.png'));
      assert.equal(put.size, bytes.length);
      assert.equal(put.contentType, 'image/png');
      assert.equal(put.sha256, createHash('sha256').update(bytes).digest('hex'));
      assert.ok(Math.abs(Date.parse(put.createdAt) - Date.now()) < 60_000);
      assert.deepEqual(await store.info(put.id), put);
    });

    test('read: the whole file, and an inclusive byte range', async () => {
      const { id } = await store.put(bytes, 'audio/mpeg');
      assert.deepEqual(await readAll(await store.read(id)), bytes);
      assert.deepEqual(await readAll(await store.read(id, { start: 100, end: 199 })), bytes.subarray(100, 200));
      assert.deepEqual(await readAll(await store.read(id, { start: 4990, end: 4999 })), bytes.subarray(4990));
      assert.deepEqual(await readAll(await store.read(id, { start: 0, end: 0 })), bytes.subarray(0, 1));
    });

    test('unknown and malformed ids have no info', async () => {
      assert.equal(await store.info('AAAAAAAAAAAAAAAAAAAAAA.png'), undefined);
      for (const bad of ['', '..', '../x', '%2e%2e%2f', 'a/b.png', '/etc/passwd', 'x'.repeat(200)]) {
        assert.equal(await store.info(bad), undefined, bad);
      }
      await assert.rejects(store.read('../../etc/passwd'));
    });

    test('delete removes the file; deleting again is harmless', async () => {
      const { id } = await store.put(bytes, 'image/webp');
      await store.delete(id);
      assert.equal(await store.info(id), undefined);
      await store.delete(id);
    });

    test('pruneOlderThan deletes only what was created before the cutoff', async () => {
      const old = await store.put(bytes, 'image/png');
      const cutoff = await nextSecond();
      const fresh = await store.put(bytes, 'image/png');
      const pruned = await store.pruneOlderThan(cutoff);
      assert.ok(pruned >= 1, `pruned ${pruned}`);
      assert.equal(await store.info(old.id), undefined);
      assert.deepEqual(await store.info(fresh.id), fresh);
      assert.equal(await store.pruneOlderThan(new Date(Date.now() - 3_600_000)), 0, 'nothing older than an hour ago');
      assert.ok((await store.pruneOlderThan(new Date(Date.now() + 60_000))) >= 1);
      assert.equal(await store.info(fresh.id), undefined);
    });
  });
}

mediaStoreSuite('FileMediaStore', openFileStore);
mediaStoreSuite('S3MediaStore (s3rver)', () => openS3Store());
