// What `docker build .` sends as its build context, decided as Docker decides it: the `.dockerignore` rules
// of moby's patternmatcher (the library BuildKit and the docker CLI share) and its ignore-file reader, so a
// check here agrees with a real build without a Docker engine. Pure functions plus a read-only file walk.
import { readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

/** Go's filepath.Clean on a slash path: no `.`/`..`/double-slash segments, no trailing slash, "" is ".". */
export function cleanPath(path: string): string {
  if (path === '') return '.';
  const cleaned = posix.normalize(path);
  return cleaned.length > 1 && cleaned.endsWith('/') ? cleaned.slice(0, -1) : cleaned;
}

/**
 * The patterns of a `.dockerignore` file, as moby's ignorefile.ReadAll reads them: a leading BOM dropped,
 * lines starting with `#` are comments (only at the very start of the line), surrounding whitespace trimmed,
 * `!` exceptions kept, each path cleaned and made relative (a leading `/` dropped; `./a` is `a`).
 */
export function readIgnoreFile(text: string): string[] {
  const patterns: string[] = [];
  for (const [index, rawLine] of text.replace(/\r\n/g, '\n').split('\n').entries()) {
    const line = index === 0 ? rawLine.replace(/^\uFEFF/, '') : rawLine;
    if (line.startsWith('#')) continue;
    let pattern = line.trim();
    if (pattern === '') continue;
    const invert = pattern.startsWith('!');
    if (invert) pattern = pattern.slice(1).trim();
    if (pattern.length > 0) {
      pattern = cleanPath(pattern);
      if (pattern.length > 1 && pattern.startsWith('/')) pattern = pattern.slice(1);
    }
    patterns.push(invert ? `!${pattern}` : pattern);
  }
  return patterns;
}

type MatchType = 'exact' | 'prefix' | 'suffix' | 'regexp';

/** Characters a regexp needs escaped that mean nothing special in a filepath pattern (moby's shouldEscape). */
const ESCAPED = new Set('.+()|{}$');

interface Pattern {
  text: string;
  exclusion: boolean;
  type: MatchType;
  regexp?: RegExp;
}

/** One pattern compiled as patternmatcher's Pattern.compile does (with `/` the separator). */
function compile(text: string, exclusion: boolean): Pattern {
  const chars = [...text];
  let source = '^';
  let type: MatchType = 'exact';
  for (let i = 0, step = 0; i < chars.length; step++) {
    const ch = chars[i++]!;
    if (ch === '*') {
      if (chars[i] === '*') {
        i++;
        if (chars[i] === '/') i++; // `**/` is `**`
        if (i >= chars.length) {
          // `**` at the end matches everything below, as in .gitignore
          if (type === 'exact') type = 'prefix';
          else {
            source += '.*';
            type = 'regexp';
          }
        } else {
          source += '(.*/)?';
          type = 'regexp';
        }
        if (step === 0) type = 'suffix';
      } else {
        source += '[^/]*';
        type = 'regexp';
      }
    } else if (ch === '?') {
      source += '[^/]';
      type = 'regexp';
    } else if (ESCAPED.has(ch)) {
      source += `\\${ch}`;
    } else if (ch === '\\') {
      if (i < chars.length) {
        source += `\\${chars[i++]}`;
        type = 'regexp';
      } else {
        source += '\\\\';
      }
    } else if (ch === '[' || ch === ']') {
      source += ch;
      type = 'regexp';
    } else {
      source += ch;
    }
  }
  if (type !== 'regexp') return { text, exclusion, type };
  try {
    return { text, exclusion, type, regexp: new RegExp(`${source}$`, 'u') };
  } catch {
    throw new Error(`.dockerignore: bad pattern ${JSON.stringify(text)}`);
  }
}

function patternMatches(pattern: Pattern, path: string): boolean {
  switch (pattern.type) {
    case 'exact':
      return path === pattern.text;
    case 'prefix':
      return path.startsWith(pattern.text.slice(0, -2));
    case 'suffix': {
      const suffix = pattern.text.slice(2);
      if (path.endsWith(suffix)) return true;
      return suffix.startsWith('/') && path === suffix.slice(1); // `**/foo` matches `foo`
    }
    case 'regexp':
      return pattern.regexp!.test(path);
  }
}

export interface IgnoreDecision {
  excluded: boolean;
  /** the last pattern that decided (the one to change), if any matched */
  pattern?: string;
}

/** A `.dockerignore`'s rules: which context paths it leaves out (patternmatcher's MatchesOrParentMatches). */
export class DockerIgnore {
  private readonly patterns: Pattern[];

  constructor(patterns: readonly string[]) {
    this.patterns = [];
    for (const raw of patterns) {
      const trimmed = raw.trim();
      if (trimmed === '') continue;
      const cleaned = cleanPath(trimmed);
      const exclusion = cleaned.startsWith('!');
      if (exclusion && cleaned.length === 1) throw new Error('.dockerignore: illegal exclusion pattern "!"');
      this.patterns.push(compile(exclusion ? cleaned.slice(1) : cleaned, exclusion));
    }
  }

  static fromFile(text: string): DockerIgnore {
    return new DockerIgnore(readIgnoreFile(text));
  }

  /** Whether a slash path relative to the context root (it or a parent directory matched) is left out; last match wins. */
  decide(path: string): IgnoreDecision {
    const file = cleanPath(path);
    const parent = posix.dirname(file);
    const parentDirs = parent.split('/');
    let decision: IgnoreDecision = { excluded: false };
    for (const pattern of this.patterns) {
      // an exclusion pattern can only undo a match, an inclusion only make one
      if (pattern.exclusion !== decision.excluded) continue;
      let match = patternMatches(pattern, file);
      if (!match && parent !== '.') {
        for (let i = 1; i <= parentDirs.length && !match; i++) match = patternMatches(pattern, parentDirs.slice(0, i).join('/'));
      }
      if (match) decision = { excluded: !pattern.exclusion, pattern: `${pattern.exclusion ? '!' : ''}${pattern.text}` };
    }
    return decision;
  }

  excludes(path: string): boolean {
    return this.decide(path).excluded;
  }
}

/**
 * Whether a path of the context directory reaches the builder: a file not left out; a directory not left out,
 * or left out but holding a file an exception brings back (BuildKit walks into it for that).
 */
export function reachesBuilder(root: string, path: string, ignore: DockerIgnore): boolean {
  const relative = cleanPath(path);
  if (relative === '.') return true;
  let directory: boolean;
  try {
    directory = statSync(join(root, relative)).isDirectory();
  } catch {
    return false;
  }
  if (!ignore.excludes(relative)) return true;
  if (!directory) return false;
  return readdirSync(join(root, relative)).some((name) => reachesBuilder(root, `${relative}/${name}`, ignore));
}

/** Go's filepath.Match for one path segment (`*`, `?`, `[...]` with `^` negation, `\` escapes) as a RegExp. */
function segmentRegExp(segment: string): RegExp {
  let source = '^';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i]!;
    if (ch === '*') source += '[^/]*';
    else if (ch === '?') source += '[^/]';
    else if (ch === '\\' && i + 1 < segment.length) source += `\\${segment[++i]}`;
    else if (ch === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end < 0) throw new Error(`bad pattern ${JSON.stringify(segment)}: unclosed [`);
      let body = segment.slice(i + 1, end);
      if (body.startsWith('^')) body = `^${body.slice(1)}`;
      source += `[${body.replace(/[\]\\]/g, '\\$&')}]`;
      i = end;
    } else source += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`${source}$`, 'u');
}

const WILDCARD = /[*?[\\]/;

/**
 * The context paths a COPY/ADD source names: itself, or for a wildcard source every path it matches (as
 * Docker matches sources: filepath.Match segment by segment, from the context root). Missing ones are absent.
 */
export function expandSource(root: string, source: string): string[] {
  const cleaned = cleanPath(source.replace(/^\/+/, '') || '.');
  if (!WILDCARD.test(cleaned)) return [cleaned];
  let paths = ['.'];
  for (const segment of cleaned.split('/')) {
    const next: string[] = [];
    for (const base of paths) {
      if (!WILDCARD.test(segment)) {
        next.push(base === '.' ? segment : `${base}/${segment}`);
        continue;
      }
      let names: string[];
      try {
        names = readdirSync(join(root, base));
      } catch {
        continue;
      }
      const regexp = segmentRegExp(segment);
      for (const name of names) if (regexp.test(name)) next.push(base === '.' ? name : `${base}/${name}`);
    }
    paths = next;
  }
  return paths;
}
