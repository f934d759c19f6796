// The x402 v2 `sign-in-with-x` extension (SIWX, CAIP-122): a wallet proves it is itself by signing a message
// bound to this origin, with a single-use nonce. EVM wallets sign EIP-4361 (SIWE) text with EIP-191, Solana
// wallets SIWS text with ed25519. The challenge and every check are @x402/extensions' own helpers; what is ours
// is which chains are offered (the enabled networks), the nonce store (the shared ledger) and the error answers.
import {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  validateSIWxMessage,
  verifySIWxSignature,
} from '@x402/extensions/sign-in-with-x';
import { randomText } from '../lib/random-text.ts';
import { isoTimeFormatter } from '../lib/iso-time.ts';
import { ApiError } from '../errors.ts';
import { NETWORKS, type NetworkName } from './networks.ts';

export { SIGN_IN_WITH_X };
export const SIGN_IN_WITH_X_HEADER = 'SIGN-IN-WITH-X';

/** how old a signed message may be (issuedAt), and how long a challenge says it lives */
export const SIWX_MAX_AGE_SECONDS = 300;
/** a challenge's nonce is 32 hex characters; a client's own must still be SIWE-valid (8+ alphanumerics) */
const NONCE = /^[A-Za-z0-9]{8,96}$/;
/** larger headers are not parsed at all */
const MAX_HEADER_CHARS = 8192;

export interface NonceStore {
  /** true the first time a nonce is used, false ever after (src/store/ledger.ts) */
  useNonce(nonce: string, expiresAt: Date): Promise<boolean>;
}

export interface SignedIn {
  /** the wallet address whose signature verified */
  address: string;
  /** the network of the chain id it signed for */
  network: NetworkName;
}

const STATEMENT = 'Sign in to fetch again a result you paid for';
const declaration = declareSIWxExtension({ statement: STATEMENT, expirationSeconds: SIWX_MAX_AGE_SECONDS })[SIGN_IN_WITH_X]!;

/** The origin-bound half of the official server extension, one per origin (bounded: origins are few). */
const servers = new Map<string, ReturnType<typeof createSIWxResourceServerExtension>>();
function serverFor(origin: string) {
  let server = servers.get(origin);
  if (!server) {
    // storage is never consulted here: the ledger decides who paid for what (payments/sign-in-replay.ts)
    server = createSIWxResourceServerExtension({ origin, storage: { hasPaid: () => false, recordPayment: () => undefined } });
    if (servers.size >= 64) servers.clear();
    servers.set(origin, server);
  }
  return server;
}

/**
 * The challenge of PAYMENT-REQUIRED.extensions["sign-in-with-x"]: `{ info: { domain, uri, version, nonce, issuedAt,
 * resources, expirationTime, statement }, supportedChains, schema }`, one chain per enabled network. Its shape is
 * the official extension's own (built once per origin and resource by its enrich hook); only the three fields
 * that hook makes fresh on each 402 (its `dynamicInfoFields`) change, so the gate pre-encodes the rest
 * (x402/spliced-header.ts) and fills in `freshSignInValues()` per answer.
 */
export interface SignInChallenge {
  /** the challenge holding these [nonce, issuedAt, expirationTime] */
  withValues(values: readonly string[]): Record<string, unknown>;
}

/** stand-ins for [nonce, issuedAt, expirationTime], each as wide as the values put in its place */
export const SIGN_IN_PLACEHOLDERS: readonly string[] = ['{sign-in-with-x nonce}'.padEnd(32, '.'), '{issuedAt}'.padEnd(24, '.'), '{expirationTime}'.padEnd(24, '.')];

interface ChallengeEntry {
  made: Promise<SignInChallenge>;
  ready?: SignInChallenge;
}
/**
 * by networks (a gate's own list, fixed for its life), origin, then resource URL: each made once (the official
 * hook is async and builds its schema each time), so the 402 path neither waits nor builds a key string
 */
const challenges = new WeakMap<readonly NetworkName[], Map<string, Map<string, ChallengeEntry>>>();

/** The challenge for one origin and resource, for these networks; the challenge itself once it is made. */
export function signInChallenge(origin: string, resourceUrl: string, networks: readonly NetworkName[]): SignInChallenge | Promise<SignInChallenge> {
  let byOrigin = challenges.get(networks);
  if (!byOrigin) challenges.set(networks, (byOrigin = new Map()));
  let byResource = byOrigin.get(origin);
  if (!byResource) {
    // origins are few (see http/origin.ts); bounded anyway
    if (byOrigin.size >= 64) byOrigin.clear();
    byOrigin.set(origin, (byResource = new Map()));
  }
  let entry = byResource.get(resourceUrl);
  if (!entry) {
    const fresh: ChallengeEntry = { made: officialChallenge(origin, resourceUrl, networks) };
    const resources = byResource;
    fresh.made.then(
      (challenge) => {
        fresh.ready = challenge;
      },
      () => resources.delete(resourceUrl),
    );
    resources.set(resourceUrl, (entry = fresh));
  }
  return entry.ready ?? entry.made;
}

async function officialChallenge(origin: string, resourceUrl: string, networks: readonly NetworkName[]): Promise<SignInChallenge> {
  const requirements = networks.map((name) => ({ network: NETWORKS[name].caip2 }));
  const enrich = serverFor(origin).enrichPaymentRequiredResponse!;
  const challenge = (await enrich(declaration, { resourceInfo: { url: resourceUrl }, requirements } as never)) as { info: Record<string, unknown> };
  // spreading keeps each key where the official hook put it: the same JSON, field for field
  return {
    withValues: ([nonce, issuedAt, expirationTime]) => ({ ...challenge, info: { ...challenge.info, nonce, issuedAt, expirationTime } }),
  };
}

/**
 * [nonce, issuedAt, expirationTime] for one 402, as the official hook makes them: 16 random bytes in hex, now, and
 * now plus the challenge's lifetime.
 */
export function freshSignInValues(now = Date.now()): string[] {
  return [randomText(16, 'hex'), issuedAtText(now), expirationText(now + SIWX_MAX_AGE_SECONDS * 1000)];
}

const issuedAtText = isoTimeFormatter();
const expirationText = isoTimeFormatter();

function refuse(reason: string, message: string): never {
  throw new ApiError(401, 'unauthorized', `${SIGN_IN_WITH_X_HEADER} refused (${reason}): ${message}`, { field: SIGN_IN_WITH_X_HEADER });
}

/**
 * Checks a SIGN-IN-WITH-X header: well formed, for an enabled network with its signature type, bound to this
 * origin, recent, signed by the address it names, and a nonce never used before (in any instance). The nonce is
 * spent only once the signature verifies, so a forged header cannot burn someone else's. 401 otherwise.
 */
export async function verifySignIn(header: string, origin: string, networks: readonly NetworkName[], nonces: NonceStore): Promise<SignedIn> {
  if (header.length > MAX_HEADER_CHARS) refuse('invalid_siwx_payload', 'header too large');
  let payload: ReturnType<typeof parseSIWxHeader>;
  try {
    payload = parseSIWxHeader(header.trim());
  } catch (error) {
    refuse('invalid_siwx_payload', (error as Error).message.slice(0, 300));
  }
  const network = networks.find((name) => NETWORKS[name].caip2 === payload.chainId);
  if (!network) refuse('invalid_siwx_unsupported_chain', `chainId must be one of ${networks.map((name) => NETWORKS[name].caip2).join(', ')}`);
  const expectedType = NETWORKS[network].family === 'evm' ? 'eip191' : 'ed25519';
  if (payload.type !== expectedType) refuse('invalid_siwx_unsupported_chain', `${payload.chainId} signs with ${expectedType}`);
  if (!NONCE.test(payload.nonce)) refuse('invalid_siwx_nonce', 'the nonce must be 8 to 96 letters and digits');

  const validation = await validateSIWxMessage(payload, new URL(origin), { maxAge: SIWX_MAX_AGE_SECONDS * 1000 });
  if (!validation.isValid) refuse(validation.invalidReason, validation.invalidMessage);
  const verification = await verifySIWxSignature(payload);
  if (!verification.isValid) refuse(verification.invalidReason, verification.invalidMessage);

  // kept until the message is too old to be accepted anyway (a minute more for clocks that disagree)
  const expiresAt = new Date(Date.parse(payload.issuedAt) + (SIWX_MAX_AGE_SECONDS + 60) * 1000);
  if (!(await nonces.useNonce(payload.nonce, expiresAt))) refuse('invalid_siwx_nonce', 'this nonce was already used; sign a fresh challenge');
  return { address: verification.payer, network };
}
