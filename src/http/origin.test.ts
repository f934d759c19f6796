import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsedOrigin } from './origin.ts';

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
