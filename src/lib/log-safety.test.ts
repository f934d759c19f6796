import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeError, redactUrlSecrets } from './log-safety.ts';

test('redactUrlSecrets: credentials of URLs go, whatever their place; the rest stays', () => {
  const cases: [string, string][] = [
    ['https://user:pass@rpc.example.com/', 'https://[redacted]@rpc.example.com/'],
    ['https://eth-mainnet.g.alchemy.com/v2/aB3dE5fG7hI9jK1lM3nO5pQ7', 'https://eth-mainnet.g.alchemy.com/v2/[redacted]'],
    ['https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef', 'https://mainnet.infura.io/v3/[redacted]'],
    ['https://rpc.example.com/?apikey=short&network=base', 'https://rpc.example.com/?apikey=[redacted]&network=base'],
    ['https://mainnet.helius-rpc.com/?api-key=1f2e3d4c-0000-4bbb-8ccc-1234567890ab', 'https://mainnet.helius-rpc.com/?api-key=[redacted]'],
    ['postgres://gateway:s3cret@db:5432/ledger', 'postgres://[redacted]@db:5432/ledger'],
    // public things stay: routes, addresses, transaction hashes, ports
    ['http://127.0.0.1:4021/api/v1/ai/chat', 'http://127.0.0.1:4021/api/v1/ai/chat'],
    ['https://basescan.org/tx/0x' + 'ab'.repeat(32), 'https://basescan.org/tx/0x' + 'ab'.repeat(32)],
  ];
  for (const [input, expected] of cases) assert.equal(redactUrlSecrets(`URL: ${input}\\nnext`), `URL: ${expected}\\nnext`, input);
  assert.equal(redactUrlSecrets('no url here: key=abc'), 'no url here: key=abc');
});

test('describeError: kind, first line and codes along the causes; an upstream error says no message', () => {
  const upstream = Object.assign(new Error('Your prompt "zebras" was refused'), { name: 'AI_APICallError', statusCode: 400 });
  const parse = new SyntaxError('Unexpected token z, "zebras" is not valid JSON');
  Object.assign(upstream, { cause: parse });
  const described = describeError(new Error('model failed\nsecond line', { cause: upstream }));
  assert.deepEqual(described, {
    type: 'Error',
    message: 'model failed',
    cause: { type: 'AI_APICallError', statusCode: 400, cause: { type: 'SyntaxError' } },
  });
  assert.equal(describeError('https://u:p@h/x\nmore'), 'https://[redacted]@h/x');
});
