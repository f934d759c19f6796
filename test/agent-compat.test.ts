// The compatibility matrix, proven: each case (test/compat/) is one mainstream agent client on one chat surface
// against one kind of model, paying through its own fetch hook, each paid call charged once on-chain. The matrix
// in docs/agent-chat.md is rendered from these cases (scripts/compat-matrix.ts): the last test checks it is.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPAT_CASES } from './compat/cases.ts';
import { MATRIX_END, MATRIX_START, renderMatrix } from './compat/case.ts';
import { MODEL_KINDS, startCompatGateway, type CompatGateway } from './compat/gateway.ts';

let gateway: CompatGateway;
before(async () => {
  gateway = await startCompatGateway();
});
after(() => gateway?.stop());

for (const compat of COMPAT_CASES) {
  test(`${compat.client} on ${compat.surface}, ${compat.feature}: ${MODEL_KINDS[compat.model]}`, () => compat.run(gateway));
}

test('docs/agent-chat.md shows the matrix these cases make (npm run compat-matrix writes it)', () => {
  const docs = readFileSync(join(import.meta.dirname, '..', 'docs', 'agent-chat.md'), 'utf8');
  const start = docs.indexOf(MATRIX_START);
  const end = docs.indexOf(MATRIX_END);
  assert.ok(start >= 0 && end > start, 'the matrix markers are in docs/agent-chat.md');
  assert.equal(docs.slice(start, end + MATRIX_END.length), renderMatrix(COMPAT_CASES));
});
