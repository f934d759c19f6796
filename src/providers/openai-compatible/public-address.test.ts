import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { isPublicAddress, publicOnlyLookup } from './public-address.ts';

test('loopback, private, link-local, unique-local and their IPv4-mapped forms are not public', () => {
  for (const address of ['127.0.0.1', '127.1.2.3', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fc12::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::10.0.0.1', 'not an address']) {
    assert.equal(isPublicAddress(address), false, address);
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    assert.equal(isPublicAddress(address), true, address);
  }
});

test('a name is refused when any address it resolves to is not public; otherwise the checked address is what connects', async () => {
  const answers: Record<string, LookupAddress[]> = {
    'rebind.example': [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }],
    'public.example': [{ address: '93.184.216.34', family: 4 }],
  };
  let resolutions = 0;
  const lookup = publicOnlyLookup((name, _options, callback) => {
    resolutions++;
    callback(null, answers[name] ?? []);
  });
  const ask = (name: string) =>
    new Promise<string>((resolve, reject) => lookup(name, {}, (error, address) => (error ? reject(error) : resolve(address as string))));
  await assert.rejects(ask('rebind.example'), /resolves to a non-public address/);
  await assert.rejects(ask('nothing.example'), /non-public/);
  assert.equal(await ask('public.example'), '93.184.216.34');
  assert.equal(resolutions, 3, 'one resolution per connection');
});
