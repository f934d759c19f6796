// Reads a request body as JSON: 415 unless it is declared application/json, 413 past the size limit,
// 400 when it does not parse. The size is enforced while reading, whatever Content-Length claims.
// Under Node the bytes come straight from the IncomingMessage: going through the web Request's
// ReadableStream costs more than everything else a 402 answer does.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { ApiError } from '../errors.ts';

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

export async function readJsonBody(c: Context, limitBytes: number): Promise<unknown> {
  if (!JSON_TYPE.test(c.req.header('Content-Type') ?? '')) {
    throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json', { field: 'Content-Type' });
  }
  const tooLarge = () => new ApiError(413, 'payload_too_large', `request body must be at most ${limitBytes} bytes`);
  if (Number(c.req.header('Content-Length')) > limitBytes) throw tooLarge();

  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const source: AsyncIterable<Uint8Array> | null = incoming ?? (c.req.raw.body as unknown as AsyncIterable<Uint8Array> | null);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (source) {
    for await (const chunk of source) {
      size += chunk.byteLength;
      if (size > limitBytes) throw tooLarge();
      chunks.push(chunk);
    }
  }
  const text = chunks.length === 1 ? Buffer.from(chunks[0]!).toString('utf8') : Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ApiError(400, 'invalid_json', 'request body is empty; a JSON object is required');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
}
