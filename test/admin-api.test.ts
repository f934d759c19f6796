// The operator API against the real service: payments made on the sandbox chain are read back through
// GET /api/v1/admin/payments and /revenue with the admin token; without it (or with a wrong one) 401; on an
// instance with no token configured, 403 admin_disabled.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, postJson } from './support/service.ts';
import { fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { payEvm, quoteFor, type PaidCallResult } from './support/paid-call.ts';
import { NETWORKS, type EvmNetwork } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';
import type { PrivateKeyAccount } from 'viem/accounts';

const TOKEN_ENV = 'X402_TEST_ADMIN_TOKEN';
const TOKEN = 'test-admin-token-0123456789abcdef';
const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a lighthouse', n: 1, size: '256x256' } };
const SPEECH = { path: '/api/v1/ai/tts', body: { text: 'Hello operator', voice: 'en-us' } };
const chainId = (NETWORKS.base as EvmNetwork).chainId;

let service: RunningService;
let buyer: PrivateKeyAccount;
const paid: PaidCallResult[] = [];

async function pay(call: { path: string; body: unknown }, account: PrivateKeyAccount): Promise<void> {
  paid.push(await payEvm(`${service.url}${call.path}`, call.body, account));
}

/** `token` null: no Authorization header (unless `headers` brings one) */
function admin(path: string, token: string | null = TOKEN, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${service.url}/api/v1/admin/${path}`, {
    headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...headers },
  });
}

/** The UTC day the payments were made (read back, so a run across midnight does not confuse the test). */
async function paymentDay(): Promise<string> {
  const days = new Set(((await json(await admin('payments'))).payments as { createdAt: string }[]).map((p) => p.createdAt.slice(0, 10)));
  assert.equal(days.size, 1);
  return [...days][0]!;
}

async function json<T = Record<string, any>>(response: Response, status = 200): Promise<T> {
  const body = await response.text();
  assert.equal(response.status, status, body);
  return JSON.parse(body) as T;
}

before(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  service = await startTestService({ networks: ['base'], config: { adminTokenEnv: TOKEN_ENV } });
  buyer = await fundedEvmBuyer(service, ['base']);
  const other = await fundedEvmBuyer(service, ['base']);
  await pay(IMAGE, buyer);
  await pay(SPEECH, buyer);
  await pay(IMAGE, other);
  // an unpaid call and a proof for the wrong amount leave no row
  const requirement = await quoteFor(`${service.url}${IMAGE.path}`, IMAGE.body);
  const underpaid = await signEvmProof(buyer, requirement, chainId, { value: BigInt(requirement.maxAmountRequired) - 1n });
  assert.equal((await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, { 'X-Network': 'base', 'X-PAYMENT': underpaid })).status, 402);
});
after(async () => {
  await service?.stop();
  delete process.env[TOKEN_ENV];
});

describe('GET /api/v1/admin/payments', () => {
  test('lists the paid requests newest first, with model, amount and transaction, never the result or payload', async () => {
    const page = await json(await admin('payments'));
    assert.equal(page.nextCursor, null);
    assert.equal(page.limit, 50);
    const rows = page.payments as Record<string, any>[];
    assert.deepEqual(rows.map((r) => r.transaction), paid.map((p) => p.transaction).reverse());
    assert.deepEqual(rows.map((r) => r.model), paid.map((p) => p.model).reverse());
    assert.deepEqual(rows.map((r) => r.amount), paid.map((p) => p.amount).reverse());
    for (const row of rows) {
      assert.equal(row.state, 'settled');
      assert.equal(row.network, 'base');
      assert.equal(row.resultAvailable, true);
      assert.equal(row.requirements.amount, row.amount, 'the requirement is stored in the internal model, whichever wire carried the proof');
      assert.equal('result' in row, false);
      assert.equal('payload' in row, false);
      assert.equal('txHash' in row, false);
      assert.match(row.createdAt, /^\d{4}-\d{2}-\d{2}T/);
    }
    assert.equal(rows[2]!.payer.toLowerCase(), buyer.address.toLowerCase());
    assert.ok(rows.every((r) => r.createdAt >= rows.at(-1)!.createdAt));
  });

  test('filters by model, state, network, payer (any case) and dates', async () => {
    const count = async (query: string) => ((await json(await admin(`payments?${query}`))).payments as unknown[]).length;
    assert.equal(await count('model=preview-image'), 2);
    assert.equal(await count('model=espeak-ng'), 1);
    assert.equal(await count('state=settled'), 3);
    assert.equal(await count('state=pending'), 0);
    assert.equal(await count('network=base'), 3);
    assert.equal(await count('network=eip155:8453'), 3, 'a CAIP-2 id names the same network');
    assert.equal(await count(`payer=${buyer.address.toLowerCase()}`), 2);
    assert.equal(await count(`payer=${buyer.address}&model=espeak-ng`), 1);
    const today = await paymentDay();
    assert.equal(await count(`from=${today}&to=${today}`), 3, 'a date `to` includes its whole day');
    assert.equal(await count('to=2000-01-01'), 0);
    assert.equal(await count(`from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), 0);
  });

  test('pages through a cursor; limit is capped', async () => {
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: Record<string, any> = await json(await admin(`payments?limit=1${cursor ? `&cursor=${cursor}` : ''}`));
      assert.ok(page.payments.length <= 1);
      seen.push(...page.payments.map((p: { key: string }) => p.key));
      cursor = page.nextCursor;
      assert.ok(seen.length <= 3);
    }
    assert.equal(new Set(seen).size, 3);
    assert.equal((await json(await admin('payments?limit=100000'))).limit, 500);
  });

  test('untrusted query: unknown, repeated or invalid parameters are 400s naming them', async () => {
    const cases: [string, string][] = [
      ['payments?netwrok=base', 'netwrok'],
      ['payments?state=lost', 'state'],
      ['payments?network=ethereum', 'network'],
      ['payments?limit=0', 'limit'],
      ['payments?limit=-1', 'limit'],
      ['payments?limit=ten', 'limit'],
      ['payments?from=2030-02-30', 'from'],
      ['payments?to=yesterday', 'to'],
      ['payments?from=2030-01-02&to=2030-01-01', 'to'],
      ['payments?state=settled&state=failed', 'state'],
      ['payments?cursor=not-a-cursor', 'cursor'],
      [`payments?cursor=${Buffer.from(JSON.stringify(['2030-01-01', "'; DROP TABLE payments; --"])).toString('base64url')}`, 'cursor'],
      ['revenue?limit=5', 'limit'],
      ['revenue?from=2030-13-01', 'from'],
      ['channels?payr=0x0000000000000000000000000000000000000001', 'payr'],
      ['channels?network=base&network=polygon', 'network'],
      ['channels?network=ethereum', 'network'],
      ['channels?payer=alice', 'payer'],
      ['channels?limit=0', 'limit'],
    ];
    for (const [path, field] of cases) {
      const body = await json(await admin(path), 400);
      assert.equal(body.code, 'invalid_request', path);
      assert.equal(body.field, field, path);
    }
    // a well-formed cursor naming rows that do not exist is simply an empty page
    const cursor = Buffer.from(JSON.stringify(['2000-01-01T00:00:00.000Z', 'zzz'])).toString('base64url');
    assert.deepEqual((await json(await admin(`payments?cursor=${cursor}`))).payments, []);
  });
});

describe('GET /api/v1/admin/revenue', () => {
  test('settled revenue per UTC day, network and model, exact, with totals per network', async () => {
    const today = await paymentDay();
    const body = await json(await admin('revenue'));
    const sum = (model?: string) => paid.filter((p) => !model || p.model === model).reduce((total, p) => total + BigInt(p.amount), 0n).toString();
    assert.deepEqual(body.rows, [
      { day: today, network: 'base', model: 'espeak-ng', count: 1, amount: sum('espeak-ng') },
      { day: today, network: 'base', model: 'preview-image', count: 2, amount: sum('preview-image') },
    ]);
    assert.deepEqual(body.totals, [{ network: 'base', count: 3, amount: sum() }]);
    assert.equal(body.from, null);
    const later = await json(await admin(`revenue?from=2100-01-01`));
    assert.deepEqual([later.rows, later.totals, later.from], [[], [], '2100-01-01T00:00:00.000Z']);
    const range = await json(await admin(`revenue?from=${today}&to=${today}`));
    assert.equal(range.totals[0].amount, sum());
    assert.equal(range.before, new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString());
  });
});

describe('authentication', () => {
  test('no token: 401 with WWW-Authenticate: Bearer, on every admin path', async () => {
    for (const path of ['payments', 'revenue', 'no-such-route']) {
      const response = await admin(path, null);
      const body = await json(response, 401);
      assert.equal(body.code, 'unauthorized');
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
    }
    const basic = await admin('payments', null, { Authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` });
    assert.equal(basic.status, 401);
  });

  test('wrong token: 401 invalid_token; the token is never echoed', async () => {
    for (const wrong of ['x', `${TOKEN}x`, TOKEN.slice(0, -1), TOKEN.toUpperCase()]) {
      const response = await admin('payments', wrong);
      const text = await response.text();
      assert.equal(response.status, 401, wrong);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_token"/);
      assert.equal(text.includes(TOKEN), false);
    }
    assert.equal((await admin('payments', TOKEN, {})).status, 200);
    assert.equal((await admin('payments', null, { Authorization: `bearer   ${TOKEN}` })).status, 200, 'the scheme is case-insensitive');
  });

  test('a wrong method: 401 before the token is checked (the guard covers the whole prefix), then 405 with Allow', async () => {
    for (const path of ['payments', 'revenue']) {
      const url = `${service.url}/api/v1/admin/${path}`;
      assert.equal((await fetch(url, { method: 'POST' })).status, 401, path);
      const response = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
      const body = await json(response, 405);
      assert.equal(response.headers.get('allow'), 'GET, HEAD', path);
      assert.deepEqual(body, { error: 'POST is not allowed here; use GET or HEAD', code: 'method_not_allowed' });
    }
  });

  test('admin answers are not cached; the routes are in the OpenAPI document', async () => {
    assert.equal((await admin('revenue')).headers.get('cache-control'), 'no-store');
    const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as Record<string, any>;
    assert.deepEqual(doc.paths['/api/v1/admin/payments'].get.security, [{ adminToken: [] }]);
    assert.ok(doc.paths['/api/v1/admin/revenue'].get);
    assert.deepEqual(doc.paths['/api/v1/admin/channels'].get.security, [{ adminToken: [] }]);
    assert.equal(doc.components.securitySchemes.adminToken.scheme, 'bearer');
  });
});

describe('no admin token configured', () => {
  let disabled: RunningService;
  before(async () => {
    disabled = await startTestService({ networks: ['base'], config: { adminTokenEnv: 'X402_TEST_ADMIN_TOKEN_UNSET' } });
  });
  after(() => disabled?.stop());

  test('every admin route answers 403 admin_disabled, token or not', async () => {
    for (const path of ['payments', 'revenue']) {
      for (const headers of [{}, { Authorization: `Bearer ${TOKEN}` }]) {
        const response = await fetch(`${disabled.url}/api/v1/admin/${path}`, { headers });
        const body = await json(response, 403);
        assert.equal(body.code, 'admin_disabled');
        assert.match(body.error, /admin API is disabled/);
      }
    }
  });
});
