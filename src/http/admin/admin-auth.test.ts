// Where the admin token comes from, and what is refused at startup.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminToken, metricsToken } from './admin-auth.ts';
import { ConfigError, loadConfig } from '../../config/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'x402-admin-token-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const config = { adminTokenEnv: 'ADMIN_TOKEN' };
const TOKEN = 'a'.repeat(15) + 'Z';

test('from the variable adminTokenEnv names (default ADMIN_TOKEN), or from NAME_FILE', () => {
  assert.equal(loadConfig({}, {}).adminTokenEnv, 'ADMIN_TOKEN');
  assert.equal(adminToken(config, { ADMIN_TOKEN: ` ${TOKEN}\n` }), TOKEN);
  const file = join(dir, 'token');
  writeFileSync(file, `${TOKEN}\n`);
  assert.equal(adminToken(config, { ADMIN_TOKEN_FILE: file }), TOKEN);
  assert.equal(adminToken({ adminTokenEnv: 'OPS_TOKEN' }, { OPS_TOKEN: TOKEN, ADMIN_TOKEN: 'other-token-0123456789' }), TOKEN);
});

test('none configured: undefined (the admin API is disabled)', () => {
  assert.equal(adminToken(config, {}), undefined);
  assert.equal(adminToken(config, { ADMIN_TOKEN: '' }), undefined);
});

test('a short, spaced, empty-file or unreadable token stops startup, without printing the token', () => {
  const empty = join(dir, 'empty');
  writeFileSync(empty, '\n');
  for (const env of [{ ADMIN_TOKEN: 'short' }, { ADMIN_TOKEN: 'has a space in it, long enough' }, { ADMIN_TOKEN_FILE: empty }, { ADMIN_TOKEN_FILE: join(dir, 'missing') }]) {
    assert.throws(() => adminToken(config, env), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /ADMIN_TOKEN/);
      assert.equal(error.message.includes('short') || error.message.includes('has a space'), false);
      return true;
    });
  }
  assert.throws(() => loadConfig({}, { adminTokenEnv: 'not a name' }), /adminTokenEnv/);
});

test('the metrics token: from METRICS_TOKEN (or the variable metricsTokenEnv names, or NAME_FILE), held to the same rules', () => {
  assert.equal(loadConfig({}, {}).metricsTokenEnv, 'METRICS_TOKEN');
  assert.equal(metricsToken({ metricsTokenEnv: 'METRICS_TOKEN' }, {}), undefined, 'unset: /metrics stays open');
  assert.equal(metricsToken({ metricsTokenEnv: 'METRICS_TOKEN' }, { METRICS_TOKEN: TOKEN, ADMIN_TOKEN: 'other-token-0123456789' }), TOKEN);
  const file = join(dir, 'metrics-token');
  writeFileSync(file, `${TOKEN}\n`);
  assert.equal(metricsToken({ metricsTokenEnv: 'SCRAPE_TOKEN' }, { SCRAPE_TOKEN_FILE: file }), TOKEN);
  assert.throws(() => metricsToken({ metricsTokenEnv: 'METRICS_TOKEN' }, { METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
  assert.throws(() => loadConfig({}, { metricsTokenEnv: 'not a name' }), /metricsTokenEnv/);
});
