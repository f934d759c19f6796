// Reads a request body as JSON: 415 unless it is declared application/json, 413 past the size limit,
// 400 when it does not parse. The size is enforced while reading, whatever Content-Length claims.
// Under Node the bytes come straight from the IncomingMessage's events: going through the web Request's
// ReadableStream (or even the stream's async iterator) costs more than everything else a 402 answer does.
// A body with a Content-Length is read into one buffer of that size as it arrives (no second copy to join its
// chunks), its text decoded and the buffer let go before it is parsed, and the text let go once parsed: a coding
// agent's session (up to the chat surfaces' 32 MB) is never held as bytes or text beside its parsed value
// (bench/agent-body.ts measures the peak it costs).
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { ApiError } from '../errors.ts';

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/**
 * `plainTextToo`: also take a body sent as text/plain (what fetch declares for a string body with no
 * Content-Type). The OpenAI-compatible routes need it: x402-fetch 1.x rebuilds the paid request's headers
 * by spreading them, which loses every header of a Headers object, the one the openai SDK passes.
 */
export async function readJsonBody(c: Context, limitBytes: number, plainTextToo = false): Promise<unknown> {
  const type = c.req.header('Content-Type') ?? '';
  if (!isJsonType(type) && !(plainTextToo && /^text\/plain\s*(;|$)/i.test(type))) {
    throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json', { field: 'Content-Type' });
  }
  const tooLarge = () => new ApiError(413, 'payload_too_large', `request body must be at most ${limitBytes} bytes`);
  if (Number(c.req.header('Content-Length')) > limitBytes) throw tooLarge();

  const incoming = (c.env as { incoming?: IncomingMessage & { rawBody?: unknown } } | undefined)?.incoming;
  // read already by the quote lane (quote-lane.ts), which could not answer it
  if (incoming?.rawBody instanceof Buffer) return parseJsonBody(incoming.rawBody.toString('utf8'));
  const sink = bodyBuffer(Number(c.req.header('Content-Length')));
  // With a Content-Length (at most the limit, checked above) Node's parser delivers exactly that many bytes,
  // so the limit cannot be crossed while reading; chunked bodies keep the iterator and its early stop.
  if (incoming && incoming.headers['content-length'] !== undefined && !incoming.readableEnded && !incoming.destroyed) {
    await readIncoming(incoming, limitBytes, tooLarge, sink);
  } else {
    await readIterable(incoming ?? (c.req.raw.body as unknown as AsyncIterable<Uint8Array> | null), limitBytes, tooLarge, sink);
  }
  return parseJsonBody(sink.take().toString('utf8'));
}

/** Where a body's bytes go as they are read: `take` hands the whole body over once, and keeps nothing of it. */
interface BodySink {
  write(chunk: Uint8Array): void;
  take(): Buffer;
}

/**
 * A declared length's bytes copied into one buffer of that size as they arrive (each chunk free to go at once);
 * without one (chunked), or past it, the chunks kept and joined at the end.
 */
function bodyBuffer(declared: number): BodySink {
  let whole: Buffer | undefined = Number.isSafeInteger(declared) && declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  let chunks: Uint8Array[] = [];
  let size = 0;
  return {
    write(chunk) {
      if (whole && size + chunk.byteLength <= whole.length) {
        whole.set(chunk, size);
      } else {
        if (whole) chunks.push(whole.subarray(0, size));
        whole = undefined;
        chunks.push(chunk);
      }
      size += chunk.byteLength;
    },
    take() {
      const bytes = whole ? whole.subarray(0, size) : Buffer.concat(chunks, size);
      whole = undefined;
      chunks = [];
      return bytes;
    },
  };
}

export function isJsonType(contentType: string): boolean {
  return JSON_TYPE.test(contentType);
}

/** A Node request's whole body (the quote lane's). */
export async function readIncomingBytes(incoming: IncomingMessage, limitBytes: number, tooLarge: () => ApiError): Promise<Buffer> {
  const sink = bodyBuffer(Number(incoming.headers['content-length']));
  await readIncoming(incoming, limitBytes, tooLarge, sink);
  return sink.take();
}

/** A request body's text as JSON: 400 when it is empty, does not parse, or holds a key named __proto__. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new ApiError(400, 'invalid_json', 'request body is empty; a JSON object is required');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
  // JSON.parse makes "__proto__" an ordinary key, but validation drops it unseen; refuse it by name. Any
  // spelling of it holds either the plain name or a \u escape, so only such bodies are walked.
  if (text.includes('__proto__') || text.includes('\\u')) refuseProtoKeys(body);
  return body;
}

function refuseProtoKeys(body: unknown): void {
  if (hasProtoKey(body)) throw new ApiError(400, 'invalid_request', 'a key named __proto__ is not accepted anywhere in the body', { field: '__proto__' });
}

/** Walks with a stack of its own: a body may nest deeper than the call stack goes. */
function hasProtoKey(root: unknown): boolean {
  const pending = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Object.hasOwn(value, '__proto__')) return true;
    for (const child of Object.values(value)) pending.push(child);
  }
  return false;
}

/** The common case: a Node request with a Content-Length, not read yet. */
function readIncoming(incoming: IncomingMessage, limitBytes: number, tooLarge: () => ApiError, sink: BodySink): Promise<void> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const fail = (error: unknown) => {
      // the rest is left to @hono/node-server, which drains unread bodies
      done();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      // not reached (see readJsonBody)
      if (size > limitBytes) return fail(tooLarge());
      try {
        sink.write(chunk);
      } catch (error) {
        fail(error);
      }
    };
    const onEnd = () => {
      done();
      resolve();
    };
    const onError = (error: Error) => fail(error);
    const onClose = () => fail(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/** Any other source (a web stream under app.request(), a Node request already read): its async iterator. */
async function readIterable(source: AsyncIterable<Uint8Array> | null, limitBytes: number, tooLarge: () => ApiError, sink: BodySink): Promise<void> {
  let size = 0;
  if (!source) return;
  for await (const chunk of source) {
    size += chunk.byteLength;
    if (size > limitBytes) throw tooLarge();
    sink.write(chunk);
  }
}
