// `node --import ./src/boot/use-stripped-sources.mjs src/main.ts` (npm start, the Docker image): our .ts
// modules load from the JavaScript scripts/strip-types.ts wrote for them, when it is there for the exact
// source text. Node's own type stripping (amaro: swc in WebAssembly) then never loads: ~17 MB resident for
// the process's lifetime, for work a build step does once. Same code, same URLs (import.meta.url, stack
// traces' lines and columns: stripping only blanks types out); a source without its file strips at load.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SOURCE_ROOT, strippedPath } from './stripped-sources.mjs';

registerHooks({
  load(url, context, nextLoad) {
    if (!url.startsWith(SOURCE_ROOT) || !url.endsWith('.ts')) return nextLoad(url, context);
    let stripped;
    try {
      stripped = readFileSync(strippedPath(readFileSync(fileURLToPath(url), 'utf8')), 'utf8');
    } catch {
      return nextLoad(url, context); // not stripped ahead (new or edited since, no cache): Node strips it
    }
    return { format: 'module', source: stripped, shortCircuit: true };
  },
});
