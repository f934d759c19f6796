// The kept unpaid 402s: given again only to the very same question, with their fresh values made anew; kept only
// once a question is asked again; never across a change of the networks that can be paid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnpaidQuotes } from './unpaid-quotes.ts';
import type { PaymentAnswer } from './payment-edge.ts';

const ORIGIN = 'http://127.0.0.1:4021';
const ROUTE = '/api/v1/ai/images';
const body = (prompt: string) => Buffer.from(JSON.stringify({ prompt }));

function quotes(offers = () => 'base,solana') {
  let nonce = 0;
  const answerTo = (prompt: string): PaymentAnswer => ({
    status: 402,
    body: `{"prompt":"${prompt}"}`,
    headers: { 'PAYMENT-REQUIRED': `nonce-${++nonce}`, 'X-Ignored-Fields': 'metadata' },
    fresh: () => ({ 'PAYMENT-REQUIRED': `nonce-${++nonce}` }),
  });
  return { kept: new UnpaidQuotes(offers), answerTo };
}

test('a question asked again is kept; the next time it gets its answer with fresh values, its other headers as they were', () => {
  const { kept, answerTo } = quotes();
  const ask = () => kept.ask(ORIGIN, ROUTE, 'base', body('a red fox'))!;
  assert.equal(kept.answer(ask()), undefined);
  kept.keep(ask(), answerTo('a red fox')); // first seen: not kept
  assert.equal(kept.answer(ask()), undefined);
  kept.keep(ask(), answerTo('a red fox')); // asked again: kept
  const first = kept.answer(ask())!;
  const second = kept.answer(ask())!;
  assert.equal(first.body, '{"prompt":"a red fox"}');
  assert.equal(first.headers['X-Ignored-Fields'], 'metadata');
  assert.notEqual(first.headers['PAYMENT-REQUIRED'], second.headers['PAYMENT-REQUIRED']);
});

test('any part of the question differing is another question', () => {
  const { kept, answerTo } = quotes();
  const asked = kept.ask(ORIGIN, ROUTE, 'base', body('a red fox'))!;
  kept.keep(asked, answerTo('a red fox'));
  kept.keep(asked, answerTo('a red fox'));
  assert.ok(kept.answer(kept.ask(ORIGIN, ROUTE, 'base', body('a red fox'))!));
  for (const other of [
    kept.ask(ORIGIN, ROUTE, 'base', body('a red fix')),
    kept.ask(ORIGIN, ROUTE, 'solana', body('a red fox')),
    kept.ask(ORIGIN, ROUTE, undefined, body('a red fox')),
    kept.ask('https://gateway.example', ROUTE, 'base', body('a red fox')),
    kept.ask(ORIGIN, '/v1/images/generations', 'base', body('a red fox')),
  ]) {
    assert.equal(kept.answer(other!), undefined);
  }
});

test('a change of the networks that can be paid: nothing kept is given, and nothing answered across it is kept', () => {
  let offers = 'base,solana';
  const { kept, answerTo } = quotes(() => offers);
  const ask = () => kept.ask(ORIGIN, ROUTE, undefined, body('a red fox'))!;
  kept.keep(ask(), answerTo('a red fox'));
  kept.keep(ask(), answerTo('a red fox'));
  assert.ok(kept.answer(ask()));
  offers = 'solana'; // base withdrawn by readiness
  assert.equal(kept.answer(ask()), undefined);
  const before = ask();
  offers = 'base,solana'; // back while that question was being answered
  kept.keep(before, answerTo('a red fox'));
  kept.keep(before, answerTo('a red fox'));
  offers = 'solana';
  assert.equal(kept.answer(ask()), undefined);
});

test('only small bodies, only unpaid 402s', () => {
  const { kept, answerTo } = quotes();
  assert.equal(kept.ask(ORIGIN, ROUTE, 'base', Buffer.alloc(4097, 0x20)), undefined);
  const asked = kept.ask(ORIGIN, ROUTE, 'base', body('a red fox'))!;
  const refused: PaymentAnswer = { ...answerTo('a red fox'), status: 503 };
  kept.keep(asked, refused);
  kept.keep(asked, refused);
  assert.equal(kept.answer(asked), undefined);
});

test('at most 256 answers kept, the oldest dropped first', () => {
  const { kept, answerTo } = quotes();
  const ask = (i: number) => kept.ask(ORIGIN, ROUTE, 'base', body(`fox ${i}`))!;
  for (let i = 0; i < 300; i++) {
    kept.keep(ask(i), answerTo(`fox ${i}`));
    kept.keep(ask(i), answerTo(`fox ${i}`));
  }
  assert.equal(kept.answer(ask(0)), undefined);
  assert.equal(kept.answer(ask(43)), undefined);
  assert.ok(kept.answer(ask(44)));
  assert.ok(kept.answer(ask(299)));
});

test('a call that is not answered 402, while nothing is kept, is never hashed', () => {
  const { kept } = quotes();
  const asked = kept.ask(ORIGIN, ROUTE, 'base', body('a red fox'))!;
  assert.equal(kept.answer(asked), undefined);
  kept.keep(asked, { status: 200, body: '{}', headers: {} });
  assert.equal(asked.hash, undefined);
});
