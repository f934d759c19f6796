// GET /media/:id — serves stored media with its content type, length, a strong ETag, immutable caching
// (the bytes behind an id never change), conditional requests (preconditions.ts) and single byte ranges
// (audio players seek with them).
import { Hono } from 'hono';
import { ApiError } from '../errors.ts';
import type { MediaStore } from './media-store.ts';
import { ifNoneMatchHits, ifRangeHolds } from './preconditions.ts';

/** Parses a single "bytes=a-b" range against a size; null when unsatisfiable, undefined when absent/ignored. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined; // multi-range or unknown unit: serve the whole file, as RFC 9110 allows
  const [, first, last] = match;
  let start: number;
  let end: number;
  if (first === '') {
    if (last === '') return undefined;
    start = Math.max(0, size - Number(last));
    end = size - 1;
  } else {
    start = Number(first);
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  }
  if (start > end || start >= size) return null;
  return { start, end };
}

export function mediaRoutes(store: MediaStore): Hono {
  const app = new Hono();
  app.get('/media/:id', async (c) => {
    const info = await store.info(c.req.param('id'));
    if (!info) throw new ApiError(404, 'not_found', 'no such media');
    const etag = `"${info.sha256}"`;
    // what a 304 repeats so caches can refresh their copy (RFC 9110 §15.4.5); the rest describes the bytes
    const validators = { ETag: etag, 'Cache-Control': 'public, max-age=31536000, immutable' };
    // If-None-Match is evaluated before Range (RFC 9110 §13.2.2): a cached copy needs no bytes at all
    if (ifNoneMatchHits(c.req.header('If-None-Match'), etag)) return c.body(null, 304, validators);
    const headers: Record<string, string> = {
      ...validators,
      'Content-Type': info.contentType,
      'Accept-Ranges': 'bytes',
      'X-Content-Type-Options': 'nosniff',
    };

    const range = ifRangeHolds(c.req.header('If-Range'), etag) ? parseRange(c.req.header('Range'), info.size) : undefined;
    if (range === null) {
      // an error like any other (render-error.ts), with the size the client needs to ask again (RFC 9110 §15.5.17)
      throw new ApiError(416, 'range_not_satisfiable', `the Range selects no byte of this media (${info.size} bytes)`, {
        field: 'Range',
        headers: { 'Content-Range': `bytes */${info.size}` },
      });
    }
    // Hono answers HEAD through this route and drops the body unread: opened, it would hold a file or an S3 socket
    const send = async (status: 200 | 206, sent: Record<string, string>, part?: { start: number; end: number }) =>
      c.req.method === 'HEAD' ? c.body(null, status, sent) : c.body(await store.read(info.id, part), status, sent);
    if (range) {
      const partial = {
        ...headers,
        'Content-Range': `bytes ${range.start}-${range.end}/${info.size}`,
        'Content-Length': String(range.end - range.start + 1),
      };
      return send(206, partial, range);
    }
    return send(200, { ...headers, 'Content-Length': String(info.size) });
  });
  return app;
}
