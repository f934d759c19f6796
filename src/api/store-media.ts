// Stores generated files before the response is built; if any write fails, the ones written are removed
// and the request fails as a storage error (and so is never charged).
import { ApiError } from '../errors.ts';
import type { MediaStore } from '../media/media-store.ts';

export async function storeAll(media: MediaStore, files: { uint8Array: Uint8Array; mediaType: string }[]): Promise<string[]> {
  const results = await Promise.allSettled(files.map((file) => media.put(file.uint8Array, file.mediaType)));
  const stored = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : []));
  if (stored.length === files.length) return stored;
  await Promise.all(stored.map((id) => media.delete(id).catch(() => undefined)));
  const failure = results.find((r) => r.status === 'rejected');
  throw new ApiError(503, 'storage_error', 'generated media could not be stored; nothing was charged', { cause: failure?.reason });
}
