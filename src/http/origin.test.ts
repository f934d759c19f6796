import { test } from 'node:test';
import assert from 'node:assert/strict';
import { originOf, parsedOrigin } from './origin.ts';

const parts = (href: string) => {
  try {
    const url = new URL(href);
    return { protocol: url.protocol, host: url.host, origin: url.origin };
  } catch {
    return 'throws';
  }
};
const memo = (href: string) => {
  try {
    const url = parsedOrigin(href);
    return { protocol: url.protocol, host: url.host, origin: url.origin };
  } catch {
    return 'throws';
  }
};

test('parsedOrigin gives what new URL() gives, for every shape of authority', () => {
  const hrefs = [
    'http://127.0.0.1:4021/api/v1/ai/chat',
    'http://LOCALHOST:80/x',
    'https://example.com:443/x?y=1',
    'https://[::1]:8443/x',
    'http://user:pass@host:8080/x',
    'http://a?b/c',
    'http://a#b/c',
    'http://a\\b/c',
    'http:///x',
    'http://h',
    'http://h?x=/y',
    'http://%41/x',
    'http://xn--nxasmq6b.example/x',
    'http://bad host/x',
    'ftp://h/x',
    'not a url',
  ];
  for (const href of hrefs) {
    assert.deepEqual(memo(href), parts(href), href);
    assert.deepEqual(memo(href), parts(href), `${href} (memoised)`); // second call hits the memo
  }
});

test('parsedOrigin agrees with new URL() on random authorities', () => {
  for (let i = 0; i < 20000; i++) {
    // half of them only of the characters the memo accepts (ports, IPv6 brackets, dots), half of anything
    const alphabet = i % 2 ? 'aZ09.-_:[]f' : 'aZ09.-:@[]?#/\\% _\t';
    let authority = '';
    const length = Math.floor(Math.random() * 12);
    for (let j = 0; j < length; j++) authority += alphabet[Math.floor(Math.random() * alphabet.length)];
    const href = `http://${authority}/path/x`;
    assert.deepEqual(memo(href), parts(href), href);
    assert.deepEqual(memo(href), parts(href), `${href} (memoised)`);
  }
});

test("originOf reads a connection's addresses at its first request; a trusted proxy's forwarded headers, at every one", () => {
  let addressReads = 0;
  const socket = {
    get localAddress() {
      addressReads += 1;
      return '::ffff:127.0.0.1';
    },
    localPort: 4021,
    remoteAddress: '10.0.0.5',
  };
  const headers = (sent: Record<string, string>) => (name: string) => sent[name];
  const direct = { trustedProxies: [] };
  assert.equal(originOf({ header: headers({}), socket, url: '' }, direct), 'http://127.0.0.1:4021');
  // what a client sends never moves the origin of a connection that is not a trusted proxy's
  assert.equal(originOf({ header: headers({ 'X-Forwarded-Host': 'evil.example', Host: 'evil.example' }), socket, url: '' }, direct), 'http://127.0.0.1:4021');
  assert.equal(addressReads, 1);

  const proxied = { trustedProxies: ['10.0.0.0/8'] };
  assert.equal(originOf({ header: headers({ 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example.com' }), socket, url: '' }, proxied), 'https://api.example.com');
  assert.equal(originOf({ header: headers({ 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'pay.example.com' }), socket, url: '' }, proxied), 'https://pay.example.com');
  assert.equal(originOf({ header: headers({}), socket, url: '' }, proxied), 'http://127.0.0.1:4021');
  assert.equal(addressReads, 2, 'read again once, for the other configuration');
});
