// Reads a request body as JSON: 415 unless it is declared application/json, 413 past the size limit,
// 400 when it does not parse. The size is enforced while streaming, whatever Content-Length claims.
import type { Context } from 'hono';
import { ApiError } from '../errors.ts';

export async function readJsonBody(c: Context, limitBytes: number): Promise<unknown> {
  const contentType = c.req.header('Content-Type') ?? '';
  if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json', { field: 'Content-Type' });
  }
  const tooLarge = new ApiError(413, 'payload_too_large', `request body must be at most ${limitBytes} bytes`);
  const declared = Number(c.req.header('Content-Length'));
  if (declared > limitBytes) throw tooLarge;

  const chunks: Uint8Array[] = [];
  let size = 0;
  const body = c.req.raw.body;
  if (body) {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > limitBytes) throw tooLarge;
      chunks.push(chunk);
    }
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ApiError(400, 'invalid_json', 'request body is empty; a JSON object is required');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
}
