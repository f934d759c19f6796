import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const LOGGING = fileURLToPath(new URL('./logging.ts', import.meta.url));

/** Runs `script` in a fresh Node with createLogger imported as `createLogger`; returns its stdout lines. */
function run(script: string): { lines: Array<Record<string, unknown>>; status: number | null } {
  const source = `import { createLogger } from ${JSON.stringify(LOGGING)};\n${script}`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  const lines = child.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, status: child.status };
}

test('buffered lines are all written on a normal exit', () => {
  const { lines, status } = run(`const log = createLogger('info'); for (let i = 0; i < 3; i++) log.info({ i }, 'request');`);
  assert.equal(status, 0);
  assert.deepEqual(lines.map((line) => line.i), [0, 1, 2]);
});

test('buffered lines survive process.exit() and a crash by an uncaught exception', () => {
  const exited = run(`const log = createLogger('info'); log.info('before exit'); process.exit(3);`);
  assert.equal(exited.status, 3);
  assert.deepEqual(exited.lines.map((line) => line.msg), ['before exit']);

  const crashed = run(`const log = createLogger('info'); log.info('before crash'); setImmediate(() => { throw new Error('boom'); });`);
  assert.equal(crashed.status, 1);
  assert.deepEqual(crashed.lines.map((line) => line.msg), ['before crash']);
});

test('a line reaches stdout while the process keeps running, without waiting for the buffer to fill', async () => {
  const source = `import { createLogger } from ${JSON.stringify(LOGGING)};\ncreateLogger('info').info('early'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`the child exited (${code}) before writing`)));
    const [chunk] = (await Promise.race([once(child.stdout, 'data'), exited])) as [Buffer];
    assert.equal((JSON.parse(chunk.toString().split('\n')[0]!) as { msg: string }).msg, 'early');
  } finally {
    child.kill();
  }
});
