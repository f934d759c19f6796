// The service with `media: { store: 's3' }`: paid media is written to the bucket and served from it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment } from 'x402-fetch';
import { startTestService } from './support/service.ts';
import { fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { startS3rver } from './support/media-stores.ts';
import { S3MediaStore } from '../src/media/s3-media-store.ts';
import type { RunningService } from '../src/service.ts';

let s3: Awaited<ReturnType<typeof startS3rver>>;
let service: RunningService;
before(async () => {
  s3 = await startS3rver('gateway-media');
  process.env.TEST_S3_ACCESS_KEY_ID = 'S3RVER';
  process.env.TEST_S3_SECRET_ACCESS_KEY = 'S3RVER';
  service = await startTestService({
    config: {
      media: {
        store: 's3',
        bucket: 'gateway-media',
        endpoint: s3.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        accessKeyIdEnv: 'TEST_S3_ACCESS_KEY_ID',
        secretAccessKeyEnv: 'TEST_S3_SECRET_ACCESS_KEY',
        prefix: 'media/',
      },
    },
  });
});
after(async () => {
  await service?.stop();
  await s3?.close();
  delete process.env.TEST_S3_ACCESS_KEY_ID;
  delete process.env.TEST_S3_SECRET_ACCESS_KEY;
});

test('a paid image lands in the bucket and is served from it', async () => {
  assert.ok(service.media instanceof S3MediaStore);
  const buyer = await fundedEvmBuyer(service, ['base']);
  const response = await wrapFetchWithPayment(fetch, buyer)(`${service.url}/api/v1/ai/images`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
    body: JSON.stringify({ prompt: 'a red kite', size: '256x256' }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const { images } = (await response.json()) as { images: string[] };
  const id = images[0]!.split('/media/')[1]!;
  const info = await service.media.info(id);
  assert.equal(info?.contentType, 'image/png');
  const image = await fetch(images[0]!);
  assert.equal(image.status, 200);
  assert.equal(image.headers.get('etag'), `"${info!.sha256}"`);
  assert.equal(Number(image.headers.get('content-length')), info!.size);
  const bytes = Buffer.from(await image.arrayBuffer());
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
});
