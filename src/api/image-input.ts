// Images in a chat prompt: a data URL is decoded at once (its bytes were in the paid request); a remote URL
// is fetched by the gateway itself when the call runs, after payment is verified and before the model is
// called: http(s) only, public addresses only (the upstream client's guard), at most MAX_IMAGE_BYTES, an
// image type, within IMAGE_FETCH_TIMEOUT_MS. A fetch that fails fails the call with a 400 naming the image's
// field (the client's URL is at fault), and nothing is charged.
import type { DownloadFunction } from 'ai/internal';
import { ApiError } from '../errors.ts';
import { limitedFetch } from '../providers/openai-compatible/limited-fetch.ts';

/** the image types every vision provider takes */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const IMAGE_FETCH_TIMEOUT_MS = 10_000;

export interface ImageInput {
  image: Uint8Array | URL;
  mediaType?: string;
}

/** An image URL from a request: a data URL's bytes, or a remote http(s) URL to fetch later; a 400 naming `field` otherwise. */
export function imageInput(url: string, field: string): ImageInput {
  if (url.startsWith('data:')) {
    const match = /^data:([a-z]+\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]*)$/i.exec(url);
    if (!match) throw new ApiError(400, 'invalid_request', `${field}: a data URL must be data:<image type>;base64,<data>`, { field });
    const mediaType = match[1]!.toLowerCase();
    if (!(IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
      throw new ApiError(400, 'invalid_request', `${field}: ${mediaType} is not an accepted image type (${IMAGE_MEDIA_TYPES.join(', ')})`, { field });
    }
    const image = new Uint8Array(Buffer.from(match[2]!, 'base64'));
    if (image.byteLength === 0) throw new ApiError(400, 'invalid_request', `${field}: the data URL holds no image`, { field });
    if (image.byteLength > MAX_IMAGE_BYTES) throw new ApiError(400, 'invalid_request', `${field}: image over ${MAX_IMAGE_BYTES} bytes`, { field });
    return { image, mediaType };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError(400, 'invalid_request', `${field}: not a URL`, { field });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ApiError(400, 'invalid_request', `${field}: only data: and http(s) image URLs are accepted`, { field });
  }
  return { image: parsed };
}

/**
 * The AI SDK download function for a call's remote images, through `fetch` (the registry's public-only
 * fetch in service; tests may hand another). Each image: bounded in size and time, an accepted image type.
 */
export function imageDownloader(
  fetch: typeof globalThis.fetch,
  { maxBytes = MAX_IMAGE_BYTES, timeoutMs = IMAGE_FETCH_TIMEOUT_MS, fieldOf = () => undefined }: { maxBytes?: number; timeoutMs?: number; fieldOf?: (url: URL) => string | undefined } = {},
): DownloadFunction {
  const bounded = limitedFetch(maxBytes, fetch);
  return (requests) =>
    Promise.all(
      requests.map(async ({ url, abortSignal }) => {
        const field = fieldOf(url) ?? 'messages';
        const fail = (why: string, cause?: unknown) =>
          new ApiError(400, 'invalid_request', `${field}: the image at ${url.origin} could not be used (${why}); nothing was charged`, { field, cause });
        const timeout = AbortSignal.timeout(timeoutMs);
        const signal = abortSignal ? AbortSignal.any([abortSignal, timeout]) : timeout;
        let response: Response;
        try {
          response = await bounded(url, { signal, redirect: 'error' });
        } catch (error) {
          if (abortSignal?.aborted) throw error;
          throw fail(timeout.aborted ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : 'fetch failed', error);
        }
        const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
        if (!response.ok || !mediaType || !(IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
          await response.body?.cancel().catch(() => undefined);
          throw fail(`answered ${response.status} ${mediaType ?? 'without a type'}, not ${IMAGE_MEDIA_TYPES.join(', ')}`);
        }
        try {
          return { data: new Uint8Array(await response.arrayBuffer()), mediaType };
        } catch (error) {
          throw fail(error instanceof Error ? error.message : 'body failed', error);
        }
      }),
    );
}
