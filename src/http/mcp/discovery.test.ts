import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/load.ts';
import { registryName, serverJson } from './discovery.ts';

const config = loadConfig({}, { sandbox: { enabled: true, networks: ['base'] } });

test('the registry name is the public host reversed, then the service name as a slug', () => {
  assert.equal(registryName(config, 'https://ai.example.com'), 'com.example.ai/x402-ai-gateway');
  assert.equal(registryName(config, 'http://127.0.0.1:4021'), 'local.127-0-0-1/x402-ai-gateway');
});

test('server.json names /mcp as a streamable-http remote, with a description the registry accepts', () => {
  const document = serverJson(config, 'https://ai.example.com', ['base']);
  assert.deepEqual(document.remotes, [{ type: 'streamable-http', url: 'https://ai.example.com/mcp' }]);
  assert.ok(String(document.description).length <= 100);
  assert.match(String(document.version), /^\d+\.\d+\.\d+/);
});
