// Where our TypeScript sources, stripped of their types ahead of time (scripts/strip-types.ts), are kept:
// one JavaScript file per source, named by the SHA-256 of the source's text, under a folder per Node version.
// A source edited since is simply not found, and Node strips it at load as before. Plain JavaScript, not
// TypeScript: it runs before anything is stripped (use-stripped-sources.mjs).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** the project's own modules: src/ (its browser code is bundled by esbuild, never loaded by Node) */
export const SOURCE_ROOT = new URL('../', import.meta.url).href;

/** node_modules/.cache, where tools keep what they rebuild at will; per Node version: its stripping may change */
export const STRIPPED_DIR = fileURLToPath(new URL(`../../node_modules/.cache/x402-ai-gateway/stripped-${process.version}/`, import.meta.url));

/** @param {string} source a TypeScript module's text @returns {string} the path of its stripped JavaScript */
export function strippedPath(source) {
  return join(STRIPPED_DIR, `${createHash('sha256').update(source).digest('hex')}.js`);
}
