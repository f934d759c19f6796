import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const LOGGING = fileURLToPath(new URL('./logging.ts', import.meta.url));

/** Runs `script` in a fresh Node with createLogger imported as `createLogger`; returns its stdout lines. */
function run(script: string): { lines: Array<Record<string, unknown>>; status: number | null; text: string } {
  const source = `import { createLogger, logRequestLine } from ${JSON.stringify(LOGGING)};\n${script}`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  const lines = child.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, status: child.status, text: child.stdout };
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

test('no line holds a URL credential, nor the message of an upstream error (which may quote the prompt)', () => {
  // viem's error for a failed RPC call: the whole URL (a hosted RPC's key in its path and query) on a later line
  const { lines } = run(`
    import { HttpRequestError } from 'viem';
    import { APICallError } from '@ai-sdk/provider';
    const log = createLogger('info');
    const url = 'https://user:hunter2pass@base-mainnet.example.com/v2/Ab12Cd34Ef56Gh78Ij90?apikey=Zz99Yy88Xx77Ww66';
    log.error({ err: new HttpRequestError({ url, body: { method: 'eth_estimateGas' }, details: 'fetch failed' }) }, 'facilitator verify failed');
    log.warn({ rpc: url }, 'reached ' + url);
    const upstream = new APICallError({ message: 'Your prompt "my secret diary about zebras" was refused', url: 'https://api.example.com/v1/chat/completions', requestBodyValues: { prompt: 'zebras' }, statusCode: 400 });
    log.warn({ err: new Error('model failed', { cause: upstream }) }, 'upstream failed');
  `);
  const text = JSON.stringify(lines);
  assert.equal(lines.length, 3, text);
  for (const secret of ['hunter2pass', 'Ab12Cd34Ef56Gh78Ij90', 'Zz99Yy88Xx77Ww66', 'zebras', 'eth_estimateGas']) assert.ok(!text.includes(secret), `${secret} in ${text}`);
  assert.match(text, /base-mainnet\.example\.com/, 'the host stays, for the operator');
  assert.match(text, /AI_APICallError/);
  assert.match(text, /"statusCode":400/);
});

test('the request line written directly is the very line pino writes, redacted alike', () => {
  const { text } = run(`
    const log = createLogger('info');
    for (const path of ['/api/v1/ai/images', '/odd "path"\\\\with\\u0001 ü', '/x/https://user:hunter2pass@example.com/'])
      for (const write of [(f) => log.info(f, 'request'), (f) => logRequestLine(log, f)])
        write({ reqId: 'e0c1f2a3-0000-4000-8000-000000000000', method: 'POST', path, status: 402, ms: 1.25 });
  `);
  const lines = text.split('\n').filter(Boolean).map((line) => line.replace(/"time":\d+/, '"time":0'));
  assert.equal(lines.length, 6, text);
  for (let i = 0; i < 6; i += 2) assert.equal(lines[i + 1], lines[i]);
  assert.ok(!text.includes('hunter2pass'), text);
});
