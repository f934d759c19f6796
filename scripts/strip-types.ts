// `node scripts/strip-types.ts` (npm's prestart, the Docker build): strips the types of every module of src/
// once, ahead of start, into the files src/boot/use-stripped-sources.mjs loads instead, so the service itself
// never loads Node's type stripper (docs/performance.md, "Idle memory"). Stripping is Node's own (module.stripTypeScriptTypes,
// what it does at load). Files of sources that no longer exist are removed. Never fails a start: without
// the files, Node strips at load as before.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCE_ROOT, STRIPPED_DIR, strippedPath } from '../src/boot/stripped-sources.mjs';

/** every module Node may load from src/: not tests, not the browser code esbuild bundles */
function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'browser' ? [] : modules(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

try {
  mkdirSync(STRIPPED_DIR, { recursive: true });
  const wanted = new Set<string>();
  for (const path of modules(fileURLToPath(SOURCE_ROOT))) {
    const source = readFileSync(path, 'utf8');
    const target = strippedPath(source);
    wanted.add(basename(target));
    // already there: the same text strips the same
    if (!existsSync(target)) writeFileSync(target, stripTypeScriptTypes(source, { mode: 'strip' }));
  }
  for (const name of readdirSync(STRIPPED_DIR)) if (!wanted.has(name)) rmSync(join(STRIPPED_DIR, name));
} catch (error) {
  console.error(`strip-types: ${(error as Error).message}; the service strips types at load instead`);
}
