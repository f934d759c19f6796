// Picks the media store the config names: files under the data dir by default, or an S3-compatible bucket
// whose credentials come from the environment variables the config names. The S3 client (~14 MB resident) is
// loaded only when the config asks for it.
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/load.ts';
import { optionalSecret } from '../config/secret.ts';
import { FileMediaStore } from './file-media-store.ts';
import type { MediaStore } from './media-store.ts';

export async function mediaStoreFromConfig(
  config: Pick<Config, 'media' | 'dataDir'>,
  env: Record<string, string | undefined> = process.env,
): Promise<{ store: MediaStore; close(): void }> {
  const media = config.media;
  if (media.store === 'file') return { store: new FileMediaStore(join(config.dataDir, 'media')), close: () => undefined };
  const accessKeyId = optionalSecret(env, media.accessKeyIdEnv);
  const secretAccessKey = optionalSecret(env, media.secretAccessKeyEnv);
  if (!accessKeyId || !secretAccessKey) {
    throw new ConfigError(
      `media store s3: set ${media.accessKeyIdEnv} and ${media.secretAccessKeyEnv} (or ${media.accessKeyIdEnv}_FILE, ${media.secretAccessKeyEnv}_FILE)`,
    );
  }
  const { S3MediaStore } = await import('./s3-media-store.ts');
  const store = new S3MediaStore({
    bucket: media.bucket,
    prefix: media.prefix,
    region: media.region,
    ...(media.endpoint ? { endpoint: media.endpoint } : {}),
    forcePathStyle: media.forcePathStyle,
    credentials: { accessKeyId, secretAccessKey },
  });
  return { store, close: () => store.close() };
}
