import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prettyLine } from './pretty-log.ts';
import { logFormatFor } from './logging.ts';

const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

test('a JSON line becomes time, level, message and key=value fields; pid and hostname are left out', () => {
  const line = JSON.stringify({ level: 30, time: at, pid: 7, hostname: 'h', msg: 'service listening', url: 'http://127.0.0.1:4021', networks: ['base'], note: 'two words' });
  assert.equal(prettyLine(line), '03:04:05.678 INFO  service listening url=http://127.0.0.1:4021 networks=["base"] note="two words"\n');
  assert.equal(prettyLine(JSON.stringify({ level: 50, time: at, msg: 'settlement failed', err: { type: 'Error' } })), '03:04:05.678 ERROR settlement failed err={"type":"Error"}\n');
});

test('a banner line is a box holding the message (wrapped) and its fields', () => {
  const line = JSON.stringify({ level: 40, time: at, banner: 'sandbox', networks: { base: 'http://127.0.0.1:8545' }, msg: 'SANDBOX MODE: test money. '.repeat(4).trim() });
  const lines = prettyLine(line).trimEnd().split('\n');
  assert.equal(lines[0], '03:04:05.678 WARN ');
  assert.match(lines[1]!, /^┌─+┐$/);
  assert.match(lines.at(-1)!, /^└─+┘$/);
  assert.ok(lines.slice(1).every((l) => l.length === lines[1]!.length && l.length <= 80), 'one width, within 80 columns');
  assert.match(lines[2]!, /^│ SANDBOX MODE: test money\. SANDBOX MODE/);
  assert.ok(lines.some((l) => /^│   base +http:\/\/127\.0\.0\.1:8545 +│$/.test(l)));
});

test('colour only when asked; a line that is not JSON passes through', () => {
  assert.match(prettyLine(JSON.stringify({ level: 40, time: at, msg: 'x' }), true), /\u001b\[33mWARN \u001b\[0m/);
  assert.equal(prettyLine('not json'), 'not json\n');
});

test('the format: the one configured, else pretty on a terminal and JSON anywhere else', () => {
  assert.equal(logFormatFor('json', 1), 'json');
  assert.equal(logFormatFor('pretty', 1), 'pretty');
  assert.equal(logFormatFor(undefined, 99_999), 'json'); // not a terminal (not even open)
});
