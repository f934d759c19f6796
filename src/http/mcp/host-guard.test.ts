import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { allowedHostnames, rebindingRefusal } from './host-guard.ts';

const live = { sandbox: { enabled: false }, host: '0.0.0.0', publicUrl: undefined as string | undefined };

test('the names /mcp answers to: the public URL, a concrete bind address, localhost in sandbox or on loopback', () => {
  assert.equal(allowedHostnames(live as never), undefined, 'a wildcard bind with no public URL: nothing known, nothing checked');
  assert.deepEqual([...allowedHostnames({ ...live, publicUrl: 'https://AI.example.com:8443/' } as never)!], ['ai.example.com']);
  assert.deepEqual([...allowedHostnames({ ...live, host: '10.1.2.3' } as never)!], ['10.1.2.3']);
  assert.deepEqual([...allowedHostnames({ ...live, host: '127.0.0.1' } as never)!].sort(), ['127.0.0.1', '::1', 'localhost']);
  assert.deepEqual([...allowedHostnames({ ...live, sandbox: { enabled: true } } as never)!].sort(), ['127.0.0.1', '::1', 'localhost']);
});

/** The refusal for a request with these headers, from `remoteAddress`. */
async function refusal(config: { publicUrl?: string; trustedProxies: string[] }, headers: Record<string, string>, remoteAddress = '203.0.113.9'): Promise<string | undefined> {
  const allowed = allowedHostnames({ ...live, ...config } as never);
  let why: string | undefined = 'not reached';
  const app = new Hono().post('/mcp', (c) => {
    why = rebindingRefusal(c, config, allowed);
    return c.body(null, 204);
  });
  await app.request('/mcp', { method: 'POST', headers }, { incoming: { socket: { remoteAddress } } });
  return why;
}

test('behind a trusted proxy the forwarded host is judged, not the Host the proxy sent', async () => {
  const config = { publicUrl: 'https://ai.example.com', trustedProxies: ['10.0.0.0/8'] };
  assert.equal(await refusal(config, { Host: 'gateway:4021', 'X-Forwarded-Host': 'ai.example.com' }, '10.0.0.7'), undefined);
  assert.match((await refusal(config, { Host: 'ai.example.com', 'X-Forwarded-Host': 'evil.example' }, '10.0.0.7'))!, /^Host "evil.example"/);
  // a client that is no proxy of ours: its X-Forwarded-Host counts for nothing
  assert.equal(await refusal(config, { Host: 'ai.example.com', 'X-Forwarded-Host': 'evil.example' }), undefined);
  assert.match((await refusal(config, { Host: 'gateway:4021', 'X-Forwarded-Host': 'ai.example.com' }))!, /^Host "gateway:4021"/);
});

test('an Origin must name the same host; a missing or opaque ("null") Origin is no browser page of another site', async () => {
  const config = { publicUrl: 'https://ai.example.com', trustedProxies: [] };
  assert.equal(await refusal(config, { Host: 'ai.example.com', Origin: 'https://ai.example.com' }), undefined);
  assert.equal(await refusal(config, { Host: 'ai.example.com' }), undefined);
  assert.equal(await refusal(config, { Host: 'ai.example.com', Origin: 'null' }), undefined);
  assert.match((await refusal(config, { Host: 'ai.example.com', Origin: 'https://evil.example' }))!, /^Origin "https:\/\/evil.example"/);
  assert.match((await refusal(config, { Host: 'ai.example.com', Origin: 'not a url' }))!, /^Origin/);
});
