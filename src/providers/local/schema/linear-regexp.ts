// A client's regular expression (a JSON Schema `pattern`) never runs on V8's backtracking engine, whose time can
// grow exponentially with the text (`^[0-9-]{8}([0-9-]+)+x$` froze a gateway for seconds on a 24-character
// string). Patterns are parsed by regexpp (ECMAScript syntax, unicode mode, as JSON Schema validators read them)
// and run by RE2JS, a port of RE2 whose matching time is linear in the text. What RE2 cannot run in linear time
// (a backreference, a lookaround, a repeat count over 1,000) is not run at all: such a pattern is left unchecked.
// Both load at the first schema with a pattern (required synchronously: the schema work is synchronous), not at
// startup: an idle gateway, or one whose clients send no patterns, never holds them (~3.5 MB resident).
import { createRequire } from 'node:module';
import type { AST, RegExpParser } from '@eslint-community/regexpp';
import type { RE2JS } from 're2js';

/** longest `pattern` read; a longer one is refused (real schemas' patterns are a few dozen characters) */
export const MAX_PATTERN_LENGTH = 1_000;

export interface LinearRegExp {
  test(text: string): boolean;
}

const require = createRequire(import.meta.url);
let parser: RegExpParser | undefined;
let re2js: typeof RE2JS | undefined;

/** The pattern's syntax tree; throws SyntaxError when it is no ECMAScript regular expression (unicode mode). */
export function parsePattern(pattern: string): AST.Pattern {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new SyntaxError(`a pattern of ${pattern.length} characters (at most ${MAX_PATTERN_LENGTH})`);
  parser ??= new (require('@eslint-community/regexpp') as typeof import('@eslint-community/regexpp')).RegExpParser();
  return parser.parsePattern(pattern, 0, pattern.length, { unicode: true });
}

const compiled = new Map<string, LinearRegExp | null>();
const KEPT = 500;

/**
 * A tester of `pattern` that runs in time linear in the text, or undefined when only a backtracking engine
 * could run it. Throws SyntaxError for a pattern that is not a regular expression.
 */
export function linearRegExp(pattern: string): LinearRegExp | undefined {
  let tester = compiled.get(pattern);
  if (tester === undefined) {
    tester = needsBacktracking(parsePattern(pattern)) ? null : re2(pattern);
    if (compiled.size >= KEPT) compiled.delete(compiled.keys().next().value!);
    compiled.set(pattern, tester);
  }
  return tester ?? undefined;
}

function re2(pattern: string): LinearRegExp | null {
  re2js ??= (require('re2js') as typeof import('re2js')).RE2JS;
  try {
    const compiledPattern = re2js.compile(re2js.translateRegExp(pattern));
    return { test: (text) => compiledPattern.matcher(text).find() };
  } catch {
    return null; // beyond RE2's limits (a repeat count over 1,000, a property it does not know)
  }
}

function needsBacktracking(node: AST.Node): boolean {
  switch (node.type) {
    case 'Backreference':
      return true;
    case 'Assertion':
      return node.kind === 'lookahead' || node.kind === 'lookbehind';
    case 'Pattern':
    case 'Group':
    case 'CapturingGroup':
      return node.alternatives.some(needsBacktracking);
    case 'Alternative':
      return node.elements.some(needsBacktracking);
    case 'Quantifier':
      return needsBacktracking(node.element);
    default:
      return false;
  }
}

/**
 * The engine Ajv compiles `pattern` and `patternProperties` with (its `code.regExp` option): RE2, or for a
 * pattern RE2 cannot run, a tester that accepts everything (the pattern is left unchecked rather than run by a
 * backtracking engine). A pattern that is not a regular expression still fails the schema's compilation.
 */
export const ajvRegExpEngine = Object.assign(
  (pattern: string): LinearRegExp => linearRegExp(pattern) ?? { test: () => true },
  { code: 'linearRegExp' },
);
