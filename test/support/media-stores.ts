// Media stores for tests: a FileMediaStore over a temp dir, and an S3MediaStore over an s3rver started on
// 127.0.0.1 (a free port) with a temp dir. close() stops and removes what was started.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { FileMediaStore } from '../../src/media/file-media-store.ts';
import { S3MediaStore } from '../../src/media/s3-media-store.ts';
import type { MediaStore } from '../../src/media/media-store.ts';

export interface OpenedStore {
  store: MediaStore;
  close(): Promise<void>;
}

export async function openFileStore(): Promise<OpenedStore> {
  const dir = mkdtempSync(join(tmpdir(), 'media-file-'));
  return { store: new FileMediaStore(dir), close: async () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startS3rver(bucket = 'media'): Promise<{ endpoint: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'media-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function openS3Store(prefix = 'generated/'): Promise<OpenedStore> {
  const s3 = await startS3rver('media');
  const store = new S3MediaStore({
    bucket: 'media',
    prefix,
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    store,
    close: async () => {
      store.close();
      await s3.close();
    },
  };
}
