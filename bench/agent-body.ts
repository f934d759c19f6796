// node bench/agent-body.ts: the memory a coding agent's large request costs the gateway. Starts the real service
// (bench/serve.ts: sandbox chains for base) and sends /v1/messages bodies shaped as a long Claude Code session (the
// recorded first request of test/fixtures/agents/, then tool results of 64 KB file reads until the body has the
// size asked), unpaid: the gateway reads, parses, checks and translates the whole body, then answers (402, or
// the 400 of a prompt over the model's limit). For each size it reports the process's peak resident memory
// (VmHWM, reset before each request through /proc/<pid>/clear_refs) above its resident memory just before, beside
// the body's size; the baseline, in the same run, is a body under 1 MB. Each size is sent twice: the first grows
// the heap to hold it, the second finds it grown. BENCH_BODY_MB (32) sets the large size.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { startGatewayChild } from './gateway-child.ts';
import { envNumber } from './env-number.ts';

const LARGE_MB = envNumber('BENCH_BODY_MB', 32);
const FIXTURE = join(import.meta.dirname, '..', 'test', 'fixtures', 'agents', 'claude-code-local_demo-bigram.json');

/** a Claude Code session of about `mb` MB: its recorded first request, then Read calls of 64 KB files */
function session(mb: number): Buffer {
  const body = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { requests: Array<{ body: Record<string, any> }> }).requests[0]!.body;
  const file = Array.from({ length: 1024 }, (_, line) => `${String(line + 1).padStart(6)}\tconst value${line} = computeSomething(${line}); // a line of source\n`).join('').slice(0, 64 * 1024);
  const messages = [...body.messages];
  // just under the size: a 32 MB body is the most the chat surfaces take (chatBodyLimitBytes)
  let size = JSON.stringify(body).length;
  for (let turn = 0; size + 2 * file.length < mb * 1024 * 1024; turn++) {
    const call = { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${turn}`, name: 'Read', input: { file_path: `/work/src/file${turn}.ts` } }] };
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: file }] };
    messages.push(call, result);
    size += JSON.stringify(call).length + JSON.stringify(result).length + 2;
  }
  messages.push({ role: 'user', content: 'Now fix the bug.' });
  return Buffer.from(JSON.stringify({ ...body, messages, stream: false }));
}

function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(text)![1]) / 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

function post(url: URL, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    // a connection of its own: no idle keep-alive socket the server may have closed meanwhile
    const req = request(new URL('/v1/messages', url), { agent: false, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-network': 'base' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const gateway = await startGatewayChild();
try {
  const rows: string[] = [];
  for (const mb of [1, LARGE_MB]) {
    const body = session(mb);
    if (body.length > mb * 1024 * 1024) throw new Error(`the ${mb} MB session came out at ${body.length} bytes`);
    // twice: the first of a size grows the heap to hold it, the second finds it grown
    for (const round of [1, 2]) {
      writeFileSync(`/proc/${gateway.pid}/clear_refs`, '5');
      const before = status(gateway.pid);
      const answered = await post(gateway.url, body);
      const after = status(gateway.pid);
      const peak = after.hwm - before.rss;
      const size = body.length / 1024 / 1024;
      rows.push(`| ${size.toFixed(1)} MB | ${round} | ${answered} | ${before.rss.toFixed(0)} MB | +${peak.toFixed(0)} MB | ${(peak / size).toFixed(1)}x | ${after.rss.toFixed(0)} MB |`);
    }
  }
  console.log('| body | request | answer | RSS before | peak RSS growth | growth / body | RSS after |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
} finally {
  await gateway.stop();
}
