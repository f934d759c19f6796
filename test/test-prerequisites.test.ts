// npm test's first step (scripts/test-prerequisites.sh, npm's `pretest`): on a machine without Debian's chromium
// (or PostgreSQL's server binaries) it installs them with apt-get when it can (root here, as on CI), and otherwise
// names exactly what to install and stops before any test runs. apt-get and the chromium path are stood in for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/test-prerequisites.sh', import.meta.url));

function prerequisites(env: Record<string, string>) {
  return spawnSync('sh', [SCRIPT], { encoding: 'utf8', env: { ...process.env, ...env } });
}

test('chromium missing: installed with apt-get, then npm test goes on', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'x402-prereq-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const chromium = join(dir, 'chromium');
  const calls = join(dir, 'apt-calls');
  // an apt-get that records what it was asked and "installs" the browser
  const aptGet = join(dir, 'apt-get');
  writeFileSync(aptGet, `#!/bin/sh\necho "$*" >> ${calls}\ncase "$*" in *install*chromium*) printf '#!/bin/sh\\n' > ${chromium}; chmod +x ${chromium};; esac\n`);
  chmodSync(aptGet, 0o755);
  const run = prerequisites({ X402_TEST_CHROMIUM: chromium, X402_APT_GET: aptGet });
  assert.equal(run.status, 0, run.stderr);
  assert.ok(existsSync(chromium));
  assert.match(readFileSync(calls, 'utf8'), /^update -qq\ninstall -y -qq --no-install-recommends .*chromium\n$/);
});

test('chromium missing and no way to install it: exit 1 naming the package and the command', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'x402-prereq-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const run = prerequisites({ X402_TEST_CHROMIUM: join(dir, 'chromium'), X402_APT_GET: join(dir, 'no-apt-get') });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /npm test needs the Debian\/Ubuntu package\(s\) chromium/);
  assert.match(run.stderr, /sudo apt-get install -y --no-install-recommends chromium/);
});
