import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSIWxResourceServerExtension, declareSIWxExtension, SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import { freshSignInValues, SIGN_IN_PLACEHOLDERS, signInChallenge, SIWX_MAX_AGE_SECONDS } from './sign-in-with-x.ts';
import { NETWORKS, type NetworkName } from './networks.ts';

const ORIGIN = 'https://ai.example.com';
const RESOURCE = `${ORIGIN}/api/v1/ai/images`;
const NETWORK_NAMES: NetworkName[] = ['base', 'polygon', 'solana'];

/** What the official resource-server extension puts in a 402, configured as the gateway declares it. */
async function officialChallenge(): Promise<{ info: Record<string, string> }> {
  const server = createSIWxResourceServerExtension({ origin: ORIGIN, storage: { hasPaid: () => false, recordPayment: () => undefined } });
  const declaration = declareSIWxExtension({ statement: 'Sign in to fetch again a result you paid for', expirationSeconds: SIWX_MAX_AGE_SECONDS })[SIGN_IN_WITH_X];
  const requirements = NETWORK_NAMES.map((name) => ({ network: NETWORKS[name].caip2 }));
  return (await server.enrichPaymentRequiredResponse!(declaration, { resourceInfo: { url: RESOURCE }, requirements } as never)) as { info: Record<string, string> };
}

test("the challenge is the official extension's, key for key in the same order, with the fresh values given", async () => {
  const official = await officialChallenge();
  const ours = await signInChallenge(ORIGIN, RESOURCE, NETWORK_NAMES);
  const { nonce, issuedAt, expirationTime } = official.info;
  assert.equal(JSON.stringify(ours.withValues([nonce!, issuedAt!, expirationTime!])), JSON.stringify(official));
  assert.equal(await signInChallenge(ORIGIN, RESOURCE, NETWORK_NAMES), ours, 'made once per origin and resource');
});

test('fresh values: a 32-hex-digit nonce never handed out twice, issued now, expiring with the challenge lifetime', () => {
  const now = Date.parse('2026-11-24T03:04:07.622Z');
  const [nonce, issuedAt, expirationTime] = freshSignInValues(now);
  assert.match(nonce!, /^[0-9a-f]{32}$/);
  assert.equal(issuedAt, '2026-11-24T03:04:07.622Z');
  assert.equal(expirationTime, '2026-11-24T03:09:07.622Z');
  // past several refills of the random pool
  const nonces = new Set(Array.from({ length: 2000 }, () => freshSignInValues()[0]));
  assert.equal(nonces.size, 2000);
  for (const value of nonces) assert.match(value!, /^[0-9a-f]{32}$/);
});

test('each placeholder is as wide as the value that replaces it (what lets the header be filled in place)', () => {
  const values = freshSignInValues();
  assert.deepEqual(
    values.map((value) => value.length),
    SIGN_IN_PLACEHOLDERS.map((placeholder) => placeholder.length),
  );
});
