// Serves a file of our own install (a page's script or style sheet) from memory: read once, on first use.
// Nothing is fetched from anywhere else, and nothing a client sends chooses the file.
import { readFile } from 'node:fs/promises';
import type { Context } from 'hono';

export interface StaticAsset {
  respond(c: Context): Promise<Response>;
}

const CACHE_CONTROL = 'public, max-age=3600';

/** A fixed file, read on first request and kept; `load` may build the content instead (e.g. a bundle). */
export function staticAsset(contentType: string, load: string | (() => Promise<string | Uint8Array>)): StaticAsset {
  let content: Promise<string | Uint8Array> | undefined;
  const read = () =>
    (content ??= (typeof load === 'string' ? readFile(load) : load()).catch((error: unknown) => {
      content = undefined; // a later request tries again
      throw error;
    }));
  return {
    async respond(c) {
      const body = await read();
      return c.body(typeof body === 'string' ? body : new Uint8Array(body), 200, { 'Content-Type': contentType, 'Cache-Control': CACHE_CONTROL });
    },
  };
}
