// npm run compat-matrix: writes the agent compatibility matrix into docs/agent-chat.md, rendered from the cases
// test/agent-compat.test.ts runs (test/compat/), between its markers. The test fails while the committed matrix
// is not the one the cases make.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPAT_CASES } from '../test/compat/cases.ts';
import { MATRIX_END, MATRIX_START, renderMatrix } from '../test/compat/case.ts';

const DOCS = join(import.meta.dirname, '..', 'docs', 'agent-chat.md');
const docs = readFileSync(DOCS, 'utf8');
const start = docs.indexOf(MATRIX_START);
const end = docs.indexOf(MATRIX_END);
if (start < 0 || end < start) throw new Error(`docs/agent-chat.md lacks the matrix markers:\n${MATRIX_START}\n${MATRIX_END}`);
writeFileSync(DOCS, docs.slice(0, start) + renderMatrix(COMPAT_CASES) + docs.slice(end + MATRIX_END.length));
console.log(`docs/agent-chat.md: ${COMPAT_CASES.length} cases`);
