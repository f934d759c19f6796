// Reads a request body as JSON: 415 unless it is declared application/json, 413 past the size limit,
// 400 when it does not parse. The size is enforced while reading, whatever Content-Length claims.
// Under Node the bytes come straight from the IncomingMessage's events: going through the web Request's
// ReadableStream (or even the stream's async iterator) costs more than everything else a 402 answer does.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { ApiError } from '../errors.ts';
import { jsonProblem, MAX_JSON_NESTING } from '../lib/json-nesting.ts';

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
  // read already by the paid lane (paid-lane.ts), which handed it over
  if (incoming?.rawBody instanceof Buffer) return parseJsonBody(incoming.rawBody.toString('utf8'));
  // A Node request's bytes come from its events, the limit checked at each (a chunked body declares no size): past
  // it the request is left as it is, not destroyed, so the 413 is answered (a destroyed request reads as a client
  // that left). A web stream (app.request() in tests) is read through its iterator.
  const bytes =
    incoming && !incoming.readableEnded && !incoming.destroyed
      ? await readIncoming(incoming, limitBytes, tooLarge)
      : await readIterable(incoming ?? (c.req.raw.body as unknown as AsyncIterable<Uint8Array> | null), limitBytes, tooLarge);
  return parseJsonBody(bytes.toString('utf8'));
}

export function isJsonType(contentType: string): boolean {
  return JSON_TYPE.test(contentType);
}

/**
 * A request body's text as JSON: 400 when it is empty, does not parse, nests deeper than MAX_JSON_NESTING or holds a
 * key named __proto__.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new ApiError(400, 'invalid_json', 'request body is empty; a JSON object is required');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
  // JSON.parse makes "__proto__" an ordinary key, but validation drops it unseen; refuse it by name. Any
  // spelling of it holds either the plain name or a \u escape, so only such bodies are walked for it; nesting
  // MAX_JSON_NESTING deep needs twice as many characters, so only longer bodies are walked for that
  const protoKeys = text.includes('__proto__') || text.includes('\\u');
  if (!protoKeys && text.length <= 2 * MAX_JSON_NESTING) return body;
  const problem = jsonProblem(body, { protoKeys });
  if (problem?.kind === 'proto_key') {
    throw new ApiError(400, 'invalid_request', 'a key named __proto__ is not accepted anywhere in the body', { field: '__proto__' });
  }
  if (problem?.kind === 'too_deep') {
    throw new ApiError(400, 'invalid_request', `the body nests deeper than ${MAX_JSON_NESTING} levels${problem.field === undefined ? '' : ` under ${problem.field}`}`, problem.field === undefined ? {} : { field: problem.field });
  }
  return body;
}

/** The common case: a Node request with a Content-Length, not read yet. */
export function readIncoming(incoming: IncomingMessage, limitBytes: number, tooLarge: () => ApiError): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limitBytes) {
        // a chunked body past the limit: nothing more is kept; once the 413 is written, @hono/node-server drains
        // what the client still sends (at most 500 ms or 64 MB, then it closes the connection)
        done();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onClose = () => {
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/** Any other source (a web stream under app.request(), a Node request already read): its async iterator. */
async function readIterable(source: AsyncIterable<Uint8Array> | null, limitBytes: number, tooLarge: () => ApiError): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (source) {
    for await (const chunk of source) {
      size += chunk.byteLength;
      if (size > limitBytes) throw tooLarge();
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, size);
}
