// The fetch every upstream call goes through: only http(s), and no response larger than a cap, whether it
// is an API answer or an image the upstream handed out by URL (the AI SDK downloads those with this same
// fetch). Time is bounded by the caller's abort signal, which the SDK passes to every request it makes.

export class UpstreamResponseTooLargeError extends Error {
  override name = 'UpstreamResponseTooLargeError';
}

export class UpstreamUrlRejectedError extends Error {
  override name = 'UpstreamUrlRejectedError';
}

function urlOf(input: string | URL | Request): URL {
  return new URL(input instanceof Request ? input.url : String(input));
}

/** A fetch that refuses non-http(s) URLs and fails a response once its body passes `maxBytes`. */
export function limitedFetch(maxBytes: number, base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    let url: URL;
    try {
      url = urlOf(input);
    } catch {
      throw new UpstreamUrlRejectedError('upstream URL is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UpstreamUrlRejectedError(`upstream URL scheme ${url.protocol} is not allowed (only http and https)`);
    }
    const response = await base(input, init);
    if (!response.body) return response;
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw new UpstreamResponseTooLargeError(`upstream response of ${declared} bytes exceeds the ${maxBytes}-byte limit`);
    }
    // A declared length within the cap bounds the body already (HTTP/1.1 framing: no byte past it is body),
    // unless fetch decompresses it; only then is counting needed (a web stream per response is not free).
    const encoding = response.headers.get('content-encoding');
    if (declared <= maxBytes && (encoding === null || encoding.trim().toLowerCase() === 'identity')) return response;
    let seen = 0;
    const capped = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            controller.error(new UpstreamResponseTooLargeError(`upstream response exceeds the ${maxBytes}-byte limit`));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    const limited = new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
    // keep what callers may read off the original (the SDK follows redirects by hand and checks `type`)
    Object.defineProperty(limited, 'url', { value: response.url });
    return limited;
  };
}
