// Every code snippet in the docs runs. Each fenced `ts` or `sh` block of README.md and docs/*.md is either marked
// `<!-- snippet: run -->` on the line before its fence, and then run here as written against a sandbox gateway
// this test starts, or marked `<!-- twin: test/<file>.test.ts -->`, naming the test that does what it shows.
// Convention (docs/paying-from-code.md, "How the snippets are tested"): the address http://127.0.0.1:4021 is
// replaced by this gateway's, X402_AI_URL points at it, and funded buyers are in BUYER_KEY / X402_EVM_PRIVATE_KEY
// (EVM, base) and SOLANA_BUYER_KEY / X402_SOLANA_SECRET_KEY (Solana, base58). A `ts` block runs as a module in a
// folder inside the clone (so it imports the clone's packages) with this Node; a `sh` block runs with bash -e
// from the clone's root with node_modules/.bin first on PATH.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getBase58Decoder } from '@solana/kit';
import { loadConfig } from '../src/config/load.ts';
import { startTestService } from './support/service.ts';
import { fundedEvmBuyerKey, fundedSolanaBuyerKey } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCS_ADDRESS = 'http://127.0.0.1:4021';
const RUN = '<!-- snippet: run -->';
const CONFIG = '<!-- snippet: config -->';
const TWIN = /^<!-- twin: (test\/[\w./-]+\.test\.ts) -->$/;

interface Snippet {
  where: string;
  language: 'ts' | 'sh' | 'json';
  code: string;
  mark: { run: true } | { twin: string } | { config: true } | undefined;
}

/** The fenced ts/sh blocks of a markdown file, with the mark on the line before each fence. */
function snippetsOf(file: string): Snippet[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const found: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w+)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((line, j) => j > i && line.trim() === '```');
    if (end < 0) break;
    const language = open[2]!;
    const before = lines.slice(0, i).reverse().find((line) => line.trim() !== '')?.trim() ?? '';
    const code = lines.slice(i + 1, end).join('\n');
    if (language === 'ts' || language === 'sh') {
      const twin = TWIN.exec(before);
      const mark = before === RUN ? ({ run: true } as const) : twin ? { twin: twin[1]! } : undefined;
      found.push({ where: `${file}:${i + 1}`, language, code, mark });
    } else if (language === 'json' && before === CONFIG) {
      found.push({ where: `${file}:${i + 1}`, language, code, mark: { config: true } });
    }
    i = end;
  }
  return found;
}

const docFiles = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
const allSnippets = docFiles.flatMap(snippetsOf);
const snippets = allSnippets.filter((snippet) => snippet.language !== 'json');

/** Relative links of a markdown file: [text](target), without external URLs. */
function linksOf(file: string): { target: string; anchor: string | undefined }[] {
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((link) => !/^[a-z]+:/i.test(link))
    .map((link) => {
      const [path, anchor] = link.split('#');
      return { target: path ? join(dirname(file), path) : file, anchor };
    });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

let service: RunningService;
let env: Record<string, string>;
let scratch: string;

before(async () => {
  service = await startTestService({ networks: ['base', 'solana'] });
  const { key: evmKey } = await fundedEvmBuyerKey(service, ['base'], 50_000_000n);
  const solana = await fundedSolanaBuyerKey(service, ['solana'], 50_000_000n);
  const solanaKey = getBase58Decoder().decode(solana.secretKey);
  env = {
    PATH: `${join(ROOT, 'node_modules/.bin')}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? ROOT,
    X402_AI_URL: service.url,
    BUYER_KEY: evmKey,
    X402_EVM_PRIVATE_KEY: evmKey,
    SOLANA_BUYER_KEY: solanaKey,
    X402_SOLANA_SECRET_KEY: solanaKey,
  };
  // inside the clone, so a snippet's imports resolve to the clone's packages (and x402-ai-gateway/client to itself)
  scratch = mkdtempSync(join(ROOT, '.snippets-'));
});

after(async () => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  await service?.stop();
});

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // a bound for failures only: a snippet that hangs fails instead of holding the suite
    const kill = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, output });
    });
  });
}

test('the docs have snippets, and every ts/sh snippet is either run here or names its twin test', () => {
  assert.ok(snippets.some((snippet) => snippet.mark && 'run' in snippet.mark), 'some snippets are run');
  for (const snippet of snippets) {
    assert.ok(snippet.mark, `${snippet.where}: a ${snippet.language} snippet needs "${RUN}" or "<!-- twin: test/<file>.test.ts -->" before its fence`);
    if ('twin' in snippet.mark) assert.ok(existsSync(join(ROOT, snippet.mark.twin)), `${snippet.where}: its twin ${snippet.mark.twin} does not exist`);
  }
});

test('every relative link of the docs reaches a file, and a heading of it when it names one', () => {
  for (const file of docFiles) {
    for (const { target, anchor } of linksOf(file)) {
      assert.ok(existsSync(join(ROOT, target)), `${file}: link to ${target}, which does not exist`);
      if (anchor && target.endsWith('.md')) {
        const headings = readFileSync(join(ROOT, target), 'utf8')
          .split('\n')
          .filter((line) => /^#{1,6} /.test(line))
          .map((line) => anchorOf(line.replace(/^#+ /, '')));
        assert.ok(headings.includes(anchor), `${file}: link to ${target}#${anchor}, which has no such heading`);
      }
    }
  }
});

test('every config example marked "<!-- snippet: config -->" loads as startup loads a config', () => {
  const configs = allSnippets.filter((snippet) => snippet.mark && 'config' in snippet.mark);
  assert.ok(configs.length > 0);
  for (const snippet of configs) assert.doesNotThrow(() => loadConfig({}, JSON.parse(snippet.code)), snippet.where);
});

for (const [index, snippet] of snippets.entries()) {
  if (!snippet.mark || !('run' in snippet.mark)) continue;
  test(`${snippet.where} runs as written (${snippet.language})`, async (t) => {
    const code = snippet.code.replaceAll(DOCS_ADDRESS, service.url);
    const { code: exit, output } =
      snippet.language === 'ts'
        ? await (async () => {
            const file = join(scratch, `snippet-${index}.ts`);
            writeFileSync(file, code);
            return run(process.execPath, [file], scratch);
          })()
        : await run('bash', ['-e', '-o', 'pipefail', '-c', code], ROOT);
    assert.equal(exit, 0, `${snippet.where} failed:\n${output}`);
    t.diagnostic(output.trim().slice(0, 400));
  });
}
