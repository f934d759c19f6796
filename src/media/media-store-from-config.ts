// Picks the media store the config names: files under the data dir by default, or an S3-compatible bucket
// whose credentials come from the environment variables the config names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config/load.ts';
import { FileMediaStore } from './file-media-store.ts';
import { S3MediaStore } from './s3-media-store.ts';
import type { MediaStore } from './media-store.ts';

export function mediaStoreFromConfig(
  config: Pick<Config, 'media' | 'dataDir'>,
  env: Record<string, string | undefined> = process.env,
): { store: MediaStore; close(): void } {
  const media = config.media;
  if (media.store === 'file') return { store: new FileMediaStore(join(config.dataDir, 'media')), close: () => undefined };
  const accessKeyId = secret(env, media.accessKeyIdEnv);
  const secretAccessKey = secret(env, media.secretAccessKeyEnv);
  if (!accessKeyId || !secretAccessKey) {
    throw new ConfigError(
      `media store s3: set ${media.accessKeyIdEnv} and ${media.secretAccessKeyEnv} (or ${media.accessKeyIdEnv}_FILE, ${media.secretAccessKeyEnv}_FILE)`,
    );
  }
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

/** VAR, or the contents of the file named by VAR_FILE (as for every other secret the config names). */
function secret(env: Record<string, string | undefined>, name: string): string | undefined {
  const direct = env[name]?.trim();
  if (direct) return direct;
  const file = env[`${name}_FILE`];
  return file ? readFileSync(file, 'utf8').trim() : undefined;
}
