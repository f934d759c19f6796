// How `npm start` launches the service, read from package.json's start script (`NAME=value ... node <flags> <entry>`):
// the environment it sets and the flags it gives node. Benchmark children start with them, so their figures are of
// the service as an operator starts it; a test holds the Dockerfile to the same settings.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StartLaunch {
  /** the `NAME=value` assignments before `node` */
  env: Record<string, string>;
  /** node's own arguments, between `node` and the entry script */
  nodeArgs: string[];
  /** the entry script, relative to the package root */
  entry: string;
}

const ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=(\S*)$/;

export function parseStartScript(script: string): StartLaunch {
  // quotes, escapes, expansions and operators are a shell's: this reader takes plain words only, and says so
  if (/['"\\$`;&|<>()]/.test(script)) throw new Error(`the start script has shell syntax this reader does not take: ${script}`);
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let at = 0;
  for (let assignment = ASSIGNMENT.exec(words[at]!); assignment; assignment = ASSIGNMENT.exec(words[++at] ?? '')) env[assignment[1]!] = assignment[2]!;
  if (words[at] !== 'node' || words.length < at + 2) throw new Error(`the start script is not "[NAME=value ...] node [flags] <entry>": ${script}`);
  return { env, nodeArgs: words.slice(at + 1, -1), entry: words.at(-1)! };
}

/** The start script of the package at `root`, parsed. */
export function readStartScript(root: string): StartLaunch {
  return parseStartScript((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start);
}
