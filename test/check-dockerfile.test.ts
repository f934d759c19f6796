// The Dockerfile check of .ci/run: Docker's .dockerignore rules (moby's patternmatcher), COPY/ADD as BuildKit
// reads them, and the check itself on this repository: failing on the files as they were, passing as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerIgnore, expandSource, readIgnoreFile, reachesBuilder } from '../scripts/docker-context.ts';
import { copySources } from '../scripts/dockerfile-sources.ts';
import { checkDockerfile } from '../scripts/check-dockerfile.ts';
import { lintDockerfile } from '../scripts/dockerfile-lint.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** whether `path` is left out by the ignore file `text` */
const leftOut = (text: string, path: string) => DockerIgnore.fromFile(text).excludes(path);

test('a pattern matches the path or any of its parent directories; `*` and `?` never cross a slash', () => {
  assert.equal(leftOut('docs', 'docs'), true);
  assert.equal(leftOut('docs', 'docs/a/b.md'), true);
  assert.equal(leftOut('docs', 'src/docs'), false); // anchored at the context root, unlike .gitignore
  assert.equal(leftOut('*', 'a/b/c'), true); // through its parent `a`
  assert.equal(leftOut('*.md', 'README.md'), true);
  assert.equal(leftOut('*.md', 'docs/x.md'), false);
  assert.equal(leftOut('a?c', 'abc'), true);
  assert.equal(leftOut('a?c', 'a/c'), false);
  assert.equal(leftOut('a/*/c', 'a/b/c'), true);
  assert.equal(leftOut('a/*/c', 'a/b/x/c'), false);
  assert.equal(leftOut('[a-c]x', 'bx'), true);
  assert.equal(leftOut('[^a-c]x', 'bx'), false);
});

test('`**` matches any number of directories, none included', () => {
  assert.equal(leftOut('**/*.test.ts', 'a.test.ts'), true);
  assert.equal(leftOut('**/*.test.ts', 'src/x/a.test.ts'), true);
  assert.equal(leftOut('**/*.test.ts', 'src/a.ts'), false);
  assert.equal(leftOut('**/node_modules', 'node_modules'), true);
  assert.equal(leftOut('**/node_modules', 'a/b/node_modules/x.js'), true);
  assert.equal(leftOut('dir/**', 'dir/a/b'), true);
  assert.equal(leftOut('dir/**', 'other/a'), false);
  assert.equal(leftOut('a/**/z', 'a/z'), true);
  assert.equal(leftOut('a/**/z', 'a/b/c/z'), true);
  assert.equal(leftOut('a/**/z', 'b/a/z'), false);
  assert.equal(leftOut('**', 'anything/at/all'), true);
  assert.equal(leftOut('**file', 'dir/myfile'), true); // a leading ** is a suffix match
});

test('regexp characters are literal, `\\` escapes a wildcard', () => {
  assert.equal(leftOut('abc.def', 'abcxdef'), false);
  assert.equal(leftOut('abc.def', 'abc.def'), true);
  assert.equal(leftOut('a(b)c+$', 'a(b)c+$'), true);
  assert.equal(leftOut('a\\*b', 'a*b'), true);
  assert.equal(leftOut('a\\*b', 'axb'), false);
});

test('`!` exceptions bring paths back, and the last matching line wins', () => {
  const rules = '*\n!package.json\n!src/\n**/*.test.ts\n!src/keep.test.ts';
  assert.equal(leftOut(rules, 'package.json'), false);
  assert.equal(leftOut(rules, 'README.md'), true);
  assert.equal(leftOut(rules, 'src/main.ts'), false);
  assert.equal(leftOut(rules, 'src/a/b.ts'), false);
  assert.equal(leftOut(rules, 'src/a/b.test.ts'), true);
  assert.equal(leftOut(rules, 'src/keep.test.ts'), false);
  assert.equal(leftOut('!src\n*', 'src/main.ts'), true); // an exception before the rule it means to undo does nothing
  assert.equal(leftOut('scripts\n!scripts/a.ts', 'scripts/a.ts'), false); // re-included from inside a left-out folder
  assert.equal(leftOut('scripts\n!scripts/a.ts', 'scripts/b.ts'), true);
  assert.deepEqual(DockerIgnore.fromFile('*\n!src').decide('src/x.ts'), { excluded: false, pattern: '!src' });
  assert.deepEqual(DockerIgnore.fromFile('*\n!src').decide('docs/x'), { excluded: true, pattern: '*' });
  assert.throws(() => DockerIgnore.fromFile('!'), /illegal exclusion pattern/);
});

test('the ignore file is read as Docker reads it: comments, whitespace, leading / and ./, cleaned paths', () => {
  const text = '\uFEFF# a comment\n\n  spaced  \n/abs/path\n./here/../there/\n! src \n  # not a comment: only at the start of a line\r\nlast';
  assert.deepEqual(readIgnoreFile(text), ['spaced', 'abs/path', 'there', '!src', '# not a comment: only at the start of a line', 'last']);
  assert.equal(leftOut('/abs/path', 'abs/path/file'), true);
  assert.equal(leftOut('./a//b/', 'a/b/c'), true);
});

test('COPY and ADD sources: flags, --from stages, JSON form, several sources, continuations, heredocs, remote ADD', () => {
  const dockerfile = [
    '# syntax=docker/dockerfile:1',
    'FROM node:24 AS deps',
    'COPY package.json package-lock.json ./',
    'copy --chown=node:node --chmod=644 ["a b.txt", "c.txt", "/dest/"]',
    'COPY --from=deps /app/node_modules ./node_modules',
    'COPY --link \\',
    '  # a comment inside the continuation',
    '  src/*.ts \\',
    '  ./src/',
    'ADD https://example.com/x.tar.gz /x/',
    'ADD --checksum=sha256:00 local.tar /y/',
    'COPY <<EOF /etc/file',
    'COPY not-an-instruction /',
    'EOF',
    'RUN echo COPY nothing /',
    'COPY $HOME/x /y',
    'COPY lonely',
  ].join('\n');
  const { sources, problems } = copySources(dockerfile);
  assert.deepEqual(
    sources.map(({ line, instruction, source }) => `${line} ${instruction} ${source}`),
    ['3 COPY package.json', '3 COPY package-lock.json', '4 COPY a b.txt', '4 COPY c.txt', '6 COPY src/*.ts', '11 ADD local.tar'],
  );
  assert.deepEqual(problems, [
    'Dockerfile:16 COPY $HOME/x: a variable in a source cannot be checked; write the path out',
    'Dockerfile:17 COPY needs at least one source and a destination',
  ]);
});

test('the escape directive changes the continuation character', () => {
  const { sources } = copySources('# escape=`\nFROM x\nCOPY a `\n  b /dest/\n');
  assert.deepEqual(sources.map((s) => s.source), ['a', 'b']);
});

test('a source reaches the builder if it, or for a folder something inside it, is left in; globs expand on real files', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-context-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['src/a.ts', 'src/a.test.ts', 'scripts/keep.ts', 'scripts/drop.ts', 'docs/x.md']) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), '');
  }
  const ignore = DockerIgnore.fromFile('*\n!src\n!scripts/keep.ts\n**/*.test.ts');
  assert.equal(reachesBuilder(dir, 'src', ignore), true);
  assert.equal(reachesBuilder(dir, 'scripts', ignore), true); // left out, but keep.ts is brought back
  assert.equal(reachesBuilder(dir, 'scripts/drop.ts', ignore), false);
  assert.equal(reachesBuilder(dir, 'docs', ignore), false);
  assert.equal(reachesBuilder(dir, 'missing', ignore), false);
  assert.equal(reachesBuilder(dir, '.', ignore), true);
  assert.deepEqual(expandSource(dir, 'src/*.ts').sort(), ['src/a.test.ts', 'src/a.ts']);
  assert.deepEqual(expandSource(dir, '/s?ripts/[k]*'), ['scripts/keep.ts']);
  assert.deepEqual(expandSource(dir, './docs/../src'), ['src']);

  const dockerfile = 'FROM x:1\nCOPY src/*.test.ts /t/\nCOPY scripts/*.ts docs /s/\nCOPY nowhere/* /n/\n';
  assert.deepEqual(checkDockerfile(dockerfile, '*\n!src\n!scripts/keep.ts\n**/*.test.ts', dir).problems, [
    'Dockerfile:2 COPY src/*.test.ts: left out of the build context by .dockerignore (src/a.test.ts matches "**/*.test.ts"); add an exception such as "!src/a.test.ts"',
    'Dockerfile:3 COPY docs: left out of the build context by .dockerignore (docs matches "*"); add an exception such as "!docs"',
    'Dockerfile:4 COPY nowhere/*: matches nothing in the build context',
  ]);
});

/** .dockerignore as it was when the image could not build (it left out scripts/, which the Dockerfile copies from) */
const OLD_DOCKERIGNORE = `# Only package.json, package-lock.json and src/ go into the image (see Dockerfile).
*
!package.json
!package-lock.json
!src/
**/*.test.ts
`;

test("this repository's Dockerfile: the old .dockerignore fails the check, the current one passes", () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const before = checkDockerfile(dockerfile, OLD_DOCKERIGNORE, ROOT);
  assert.equal(before.problems.length, 2);
  assert.match(before.problems[0]!, /^Dockerfile:\d+ COPY scripts\/lean-install\.ts: left out of the build context by \.dockerignore \(scripts\/lean-install\.ts matches "\*"\)/);
  assert.match(before.problems[1]!, /^Dockerfile:\d+ COPY scripts\/strip-types\.ts: left out of the build context by \.dockerignore \(scripts\/strip-types\.ts matches "\*"\)/);

  const after = checkDockerfile(dockerfile, readFileSync(join(ROOT, '.dockerignore'), 'utf8'), ROOT);
  assert.deepEqual(after.problems, []);
  assert.deepEqual(
    after.checked.map((where) => where.replace(/^Dockerfile:\d+ /, '')),
    ['COPY package.json', 'COPY package-lock.json', 'COPY scripts/lean-install.ts', 'COPY package.json', 'COPY src', 'COPY scripts/strip-types.ts'],
  );
});

test('lint: pinned base images, exec-form CMD, COPY for local files, an unprivileged user at the end', () => {
  const bad = [
    'ARG BASE=node:24',
    'FROM ${BASE} AS deps',
    'FROM node AS other',
    'FROM debian:latest',
    'COPY --from=deps /app /app',
    'ADD src /app/src',
    'ADD https://example.com/a.tgz /tmp/',
    'CMD node main.js',
  ].join('\n');
  assert.deepEqual(lintDockerfile(bad), [
    'Dockerfile:3 FROM node: the image has no tag; pin one (builds must be repeatable)',
    'Dockerfile:4 FROM debian:latest: "latest" moves; pin a version',
    'Dockerfile:6 ADD: use COPY for local files (ADD also unpacks archives and fetches URLs)',
    'Dockerfile:8 CMD: use the JSON (exec) form; the shell form runs under /bin/sh, which does not pass SIGTERM on, so no graceful shutdown',
    'Dockerfile:8 CMD: the final stage runs as root; switch to an unprivileged USER before it',
  ]);
  assert.deepEqual(lintDockerfile('FROM node:24@sha256:abc AS a\nFROM a\nUSER node\nCMD ["node", "x.js"]\n'), []);
  assert.deepEqual(lintDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')), []);
});
