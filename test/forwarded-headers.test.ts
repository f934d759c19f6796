// X-Forwarded-Proto/Host (and Host) are believed only from a configured proxy: any other client cannot choose
// the `resource` URL of its 402 (and so the stored receipt's resource) or the host of its media URLs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestService } from './support/service.ts';

const BODY = JSON.stringify({ model: 'local/demo-bigram', prompt: 'Hello' });

/** A quote asked with raw headers (fetch would not send our Host): the resource URL it names. */
function quotedResource(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/v1/ai/chat`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base', ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        try {
          assert.equal(res.statusCode, 402, text);
          resolve((JSON.parse(text) as { accepts: { resource: string }[] }).accepts[0]!.resource);
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

const SPOOFED = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'attacker.example', Host: 'attacker.example' };

test('by default no forwarding header (nor Host) is believed: the resource is the address the connection reached', async () => {
  const service = await startTestService();
  try {
    assert.equal(await quotedResource(service.url, SPOOFED), `${service.url}/api/v1/ai/chat`);
    assert.equal(await quotedResource(service.url, { 'X-Forwarded-Host': 'attacker.example' }), `${service.url}/api/v1/ai/chat`);
  } finally {
    await service.stop();
  }
});

test('a proxy list that does not hold the client: its headers are ignored; one that does: they are used', async () => {
  const elsewhere = await startTestService({ config: { trustedProxies: ['10.0.0.0/8', '::1'] } });
  const here = await startTestService({ config: { trustedProxies: ['127.0.0.0/8'] } });
  try {
    assert.equal(await quotedResource(elsewhere.url, SPOOFED), `${elsewhere.url}/api/v1/ai/chat`);
    assert.equal(await quotedResource(here.url, SPOOFED), 'https://attacker.example/api/v1/ai/chat');
  } finally {
    await Promise.all([elsewhere.stop(), here.stop()]);
  }
});

test('publicUrl wins over everything', async () => {
  const service = await startTestService({ config: { publicUrl: 'https://ai.example.com/', trustedProxies: ['127.0.0.1'] } });
  try {
    assert.equal(await quotedResource(service.url, SPOOFED), 'https://ai.example.com/api/v1/ai/chat');
  } finally {
    await service.stop();
  }
});

test('a trustedProxies entry that is not an address or range stops startup', async () => {
  const { loadConfig } = await import('../src/config/load.ts');
  assert.throws(() => loadConfig({}, { trustedProxies: ['proxy.internal', '10.0.0.0/33', '10.0.0.1'] }), /trustedProxies\.0: proxy\.internal is not an IP address or CIDR range[\s\S]*trustedProxies\.1: 10\.0\.0\.0\/33/);
});
