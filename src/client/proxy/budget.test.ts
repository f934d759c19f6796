// The spend file under the budget: private to its owner, the same totals after a restart, one cap shared by
// every process writing it (the proxy and the MCP bridge), and a damaged file refuses every payment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, chmodSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Budget, CapExceeded } from './budget.ts';
import { SpendFileError, SpendLog } from './spend-log.ts';

const facts = { scheme: 'exact', network: 'base', surface: '/v1/chat/completions' };

function withDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'x402-spend-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the spend file is made readable by its owner only, and a wider one is narrowed before use', () => {
  withDir((dir) => {
    const path = join(dir, 'nested', 'spend.jsonl');
    new SpendLog(path).close();
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'nested')).mode & 0o777, 0o700);
    chmodSync(path, 0o644);
    new SpendLog(path).close();
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });
});

test('a restart reads the same totals: holds, charges and releases', () => {
  withDir((dir) => {
    const path = join(dir, 'spend.jsonl');
    const first = new Budget(new SpendLog(path), { total: 5000n });
    const a = first.hold(3000n, facts, true);
    first.charged(a, 1200n, { model: 'm', promptTokens: 10, completionTokens: 5 });
    const b = first.hold(2000n, facts, true);
    first.released(b);
    first.hold(1000n, facts, true); // signed, no receipt yet: counted at its ceiling
    first.log.close();

    const again = new Budget(new SpendLog(path), { total: 5000n });
    assert.equal(again.state.total, 2200n);
    assert.equal(again.state.spends.get(a)?.model, 'm');
    assert.throws(() => again.hold(2801n, facts, true), CapExceeded);
    assert.doesNotThrow(() => again.hold(2800n, facts, true));
    again.log.close();
  });
});

test('a charge above the hold is counted as the hold: a gateway cannot charge more than was signed', () => {
  withDir((dir) => {
    const budget = new Budget(new SpendLog(join(dir, 'spend.jsonl')), {});
    const id = budget.hold(1000n, facts, true);
    budget.charged(id, 5000n);
    assert.equal(budget.state.total, 1000n);
    budget.log.close();
  });
});

test('two processes on one spend file share the cap: the one that wrote its hold first gets the room', () => {
  withDir((dir) => {
    const path = join(dir, 'spend.jsonl');
    const proxy = new Budget(new SpendLog(path), { total: 10_000n });
    const bridge = new Budget(new SpendLog(path), { total: 10_000n });
    proxy.hold(6000n, facts, true);
    // the bridge has not read the file since; its hold is checked against the proxy's, written before it
    assert.throws(() => bridge.hold(6000n, facts, true), (error) => error instanceof CapExceeded && error.refusal.spent === 6000n);
    assert.doesNotThrow(() => bridge.hold(4000n, facts, true));
    assert.throws(() => proxy.hold(1n, facts, true), CapExceeded, 'and the proxy sees the bridge’s');
    assert.equal(proxy.refresh().total, 10_000n);
    proxy.log.close();
    bridge.log.close();
  });
});

test('a damaged spend file refuses to be read: nothing is signed until it is repaired', () => {
  withDir((dir) => {
    const path = join(dir, 'spend.jsonl');
    writeFileSync(path, '{"kind":"hold","id":"a","at":1,"amount":"5","scheme":"exact","network":"base","surface":"/x"}\n', { mode: 0o600 });
    appendFileSync(path, 'not json\n');
    assert.throws(() => new Budget(new SpendLog(path), {}), (error) => error instanceof SpendFileError && /line 2/.test(error.message));
  });
});

test('a spend file cut short under a running proxy refuses the next payment rather than forget what it held', () => {
  withDir((dir) => {
    const path = join(dir, 'spend.jsonl');
    const budget = new Budget(new SpendLog(path), { total: 10_000n });
    budget.hold(4000n, facts, true);
    truncateSync(path, 0);
    assert.throws(() => budget.hold(1000n, facts, true), (error) => error instanceof SpendFileError && /did not read back/.test(error.message));
    budget.log.close();
  });
});
