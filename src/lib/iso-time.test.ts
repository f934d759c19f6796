import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isoTimeFormatter } from './iso-time.ts';

test('the same text as toISOString, within a second, across seconds and back in time', () => {
  const iso = isoTimeFormatter();
  const start = Date.UTC(2026, 10, 28, 23, 59, 58, 990);
  const times = [start, start + 1, start + 9, start + 10, start + 99, start + 100, start + 1009, start + 2_000, start - 5, 0, 999, 1_000, start];
  for (let i = 0; i < 2_000; i++) times.push(start + Math.floor(Math.random() * 5_000));
  for (const ms of times) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
});

test('dates outside years 0 to 9999 are formatted whole', () => {
  const iso = isoTimeFormatter();
  for (const ms of [-62_198_755_200_001, 253_402_300_800_000, 8.64e15]) assert.equal(iso(ms), new Date(ms).toISOString());
});
