// npm start strips our modules' types ahead (scripts/strip-types.ts) and loads them through
// use-stripped-sources.mjs: the service's whole module graph loads without Node's type stripper (amaro, ~17 MB
// resident), and a module without its stripped file (edited since) still loads, stripped by Node as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STRIPPED_DIR, strippedPath } from './stripped-sources.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function stripAhead(): void {
  execFileSync(process.execPath, ['--disable-warning=ExperimentalWarning', 'scripts/strip-types.ts'], { cwd: ROOT });
}

/** `module` imported by a fresh node started with the hook, as npm start starts it */
function importWithHook(module: string): { exports: string[]; typeStripperLoaded: boolean } {
  const script = `const loaded = await import(${JSON.stringify(module)});
    console.log(JSON.stringify({ exports: Object.keys(loaded), typeStripperLoaded: process.moduleLoadList.some((name) => name.includes('amaro')) }));`;
  const out = execFileSync(process.execPath, ['--import', './src/boot/use-stripped-sources.mjs', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as { exports: string[]; typeStripperLoaded: boolean };
}

test('stripped ahead, the whole service loads without Node ever loading its type stripper', () => {
  stripAhead();
  const service = importWithHook('./src/service.ts');
  assert.ok(service.exports.includes('startService'));
  assert.equal(service.typeStripperLoaded, false);
});

test('a module edited since it was stripped loads all the same, stripped by Node at load', () => {
  stripAhead();
  const stripped = strippedPath(readFileSync(join(ROOT, 'src/x402/networks.ts'), 'utf8'));
  renameSync(stripped, `${stripped}.away`); // what an edit does: its text no longer names a stripped file
  try {
    const networks = importWithHook('./src/x402/networks.ts');
    assert.ok(networks.exports.includes('NETWORKS'));
    assert.equal(networks.typeStripperLoaded, true);
  } finally {
    renameSync(`${stripped}.away`, stripped);
  }
});

test('stripping ahead removes the files of sources that no longer exist', () => {
  const orphan = join(STRIPPED_DIR, `${'0'.repeat(64)}.js`);
  writeFileSync(orphan, 'export {};');
  stripAhead();
  assert.equal(existsSync(orphan), false);
});
