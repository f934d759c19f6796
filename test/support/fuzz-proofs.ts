// Generated payment proofs for test/fuzz.test.ts, on every wire (X-PAYMENT v1, PAYMENT-SIGNATURE v2, both): junk
// that is not a proof at all, envelopes with a field of the wrong kind, real signatures over the wrong terms
// (EVM EIP-3009 authorizations signed with one term changed; Solana transfers signed by the official client, then
// altered), upto Permit2 payments altered, and replays of proofs that really paid. Each request says whether it
// was tampered with: such a request must never be served, whatever else is wrong with it.
import { createHash } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Prng } from './prng.ts';
import { signEvmProof, type ProofOverrides } from './evm-proof.ts';
import { junkText, type FuzzRequest, type PaidRoute } from './fuzz-requests.ts';
import type { PaymentRequirements } from '../../src/x402/types.ts';
import type { V2Requirements } from '../../src/x402/v2/codec.ts';

/** One route's price on one network, as the 402 stated it on both wires. */
export interface Quote {
  route: PaidRoute;
  v1: PaymentRequirements;
  v2: V2Requirements;
  /** the v2 402's `resource`, echoed by v2 clients */
  resource: unknown;
}

export interface EvmMaterial {
  /** a funded buyer: a proof it signs fails only for what was tampered with */
  buyer: PrivateKeyAccount;
  chainId: number;
  quotes: Quote[];
}

export interface SvmMaterial {
  quotes: Quote[];
  /** per quote (same index): proofs the official client signed for it, as { x402Version, payload } */
  signed: { payload: { transaction: string } }[][];
}

export interface UptoMaterial {
  route: PaidRoute;
  /** PAYMENT-SIGNATURE envelopes the official upto client made: one that paid during setup, one never sent */
  proofs: { envelope: Record<string, unknown>; settled: boolean }[];
}

/** A request that paid during setup: its exact headers and body. */
export interface SettledCall {
  route: PaidRoute;
  body: string;
  headers: Record<string, string>;
}

/** batch-settlement (payment channel) vouchers the official client signed: one that paid during setup, one never sent */
export interface ChannelMaterial {
  route: PaidRoute;
  proofs: { envelope: Record<string, unknown>; settled: boolean }[];
}

export interface ProofMaterial {
  evm: EvmMaterial;
  svm?: SvmMaterial;
  upto?: UptoMaterial;
  channel?: ChannelMaterial;
  settled: SettledCall[];
}

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');
const decode = (header: string): Record<string, unknown> => JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as Record<string, unknown>;
const stranger = privateKeyToAccount(generatePrivateKey());

function hex(prng: Prng, bytes: number): `0x${string}` {
  return `0x${prng.bytes(bytes).toString('hex')}`;
}

/** One character of a hex or base64 string changed (never the 0x prefix). */
function flipChar(prng: Prng, text: string, alphabet: string): string {
  const at = prng.int(text.startsWith('0x') ? 2 : 0, text.length - 1);
  const current = text[at]!;
  const replacement = [...alphabet].find((char) => char !== current && prng.chance(0.3)) ?? (current === alphabet[0] ? alphabet[1]! : alphabet[0]!);
  return text.slice(0, at) + replacement + text.slice(at + 1);
}

/** Headers that are not a proof at all: encodings and documents no client would send. */
function junkHeader(prng: Prng): string {
  return prng.pick<() => string>([
    () => '',
    () => ' ',
    () => 'not base64!',
    () => prng.bytes(prng.int(1, 200)).toString('base64'),
    () => prng.bytes(prng.int(1, 60)).toString('base64url'),
    () => encode(prng.pick([null, 0, 'x', [], {}, [1, 2], true])),
    () => Buffer.from('{"x402Version":1,').toString('base64'),
    () => Buffer.from(junkText(prng, 50)).toString('base64'),
    () => encode({ x402Version: 1, scheme: 'exact', network: 'base', payload: junkText(prng, 30) }),
    () => encode({ x402Version: 2, accepted: null, payload: {} }),
    () => encode({ x402Version: 1, scheme: 'exact', network: 'base', payload: { transaction: junkText(prng, 30) } }),
    () => encode({ __proto__: { polluted: 1 }, constructor: { prototype: { x: 1 } } }).replace(/^/, ''),
    () => Buffer.from('{"__proto__":{"x402Version":1,"scheme":"exact","network":"base"},"payload":{}}').toString('base64'),
    () => 'A'.repeat(prng.pick([4_000, 12_000])),
    () => '=' + encode({ x402Version: 1 }),
  ])();
}

/** A proof as a v1 envelope, and whether it was tampered with (in the envelope alone, or in what was signed). */
interface SignedProof {
  label: string;
  v1: Record<string, unknown>;
  tampered: boolean;
  /** what was tampered with is in the v1 envelope only: the v2 envelope built from the 402 does not carry it */
  envelopeOnly?: boolean;
}

/** An EVM proof for `quote`: signed by the buyer with at most one term wrong, or altered after signing. */
async function evmProof(prng: Prng, material: EvmMaterial, quote: Quote): Promise<SignedProof> {
  const requirement = quote.v1;
  const now = BigInt(Math.floor(Date.now() / 1000));
  const price = BigInt(requirement.maxAmountRequired);
  const signOverrides: [string, ProofOverrides | undefined][] = [
    ['valid', undefined],
    ['to a stranger', { to: stranger.address }],
    ['one unit short', { value: price - 1n }],
    ['one unit over', { value: price + 1n }],
    ['value 0', { value: 0n }],
    ['value 2^256-1', { value: 2n ** 256n - 1n }],
    ['expired', { validBefore: now - 10n }],
    ['not yet valid', { validAfter: now + 3_600n }],
    ['validity beyond the timeout', { validBefore: now + 100_000n }],
    ['another chain id', { chainId: 1 }],
    ['another token contract', { verifyingContract: stranger.address }],
    ['signed by a stranger', { signer: stranger }],
    ['network polygon', { network: 'polygon' }],
    ['network solana', { network: 'solana' }],
    ['network as CAIP-2', { network: 'eip155:8453' }],
    ['scheme upto', { scheme: 'upto' }],
    ['scheme EXACT', { scheme: 'EXACT' }],
    ['x402Version 2', { x402Version: 2 }],
    ['x402Version 0', { x402Version: 0 }],
  ];
  const [label, overrides] = prng.pick(signOverrides);
  const signed = decode(await signEvmProof(material.buyer, requirement, material.chainId, { nonce: hex(prng, 32), ...overrides }));
  const altered = prng.chance(0.5) ? alterEvm(prng, signed) : undefined;
  // a valid signature over terms that are merely odd (validity window, CAIP-2 name) may still be honoured; only
  // a change of who, what, how much, where or the signature itself is a tamper
  const harmless = label === 'valid' || label === 'network as CAIP-2' || label === 'validity beyond the timeout';
  if (altered) return { label: `evm ${label}, then ${altered}`, v1: signed, tampered: true };
  // the signature covers the authorization only: a wrong network, scheme or version is in the v1 envelope alone
  const envelopeOnly = ['network polygon', 'network solana', 'scheme upto', 'scheme EXACT', 'x402Version 2', 'x402Version 0'].includes(label);
  return { label: `evm ${label}`, v1: signed, tampered: !harmless, envelopeOnly };
}

/** Changes a signed EVM envelope in place; returns what it changed. */
function alterEvm(prng: Prng, envelope: Record<string, unknown>): string {
  const payload = envelope.payload as { signature: string; authorization: Record<string, unknown> };
  const auth = payload.authorization;
  return prng.pick<() => string>([
    () => ((payload.signature = flipChar(prng, payload.signature, '0123456789abcdef')), 'a signature digit changed'),
    () => ((payload.signature = '0x' + '0'.repeat(130)), 'an all-zero signature'),
    () => ((payload.signature = payload.signature.slice(0, 66)), 'a signature cut short'),
    () => ((payload.signature = payload.signature + '00'), 'a signature one byte long'),
    () => ((payload.signature = 'not hex'), 'a signature that is not hex'),
    () => ((auth.from = stranger.address), 'from a stranger'),
    () => ((auth.to = stranger.address), 'to a stranger'),
    () => ((auth.value = String(BigInt(auth.value as string) + 1n)), 'value raised'),
    () => ((auth.value = prng.pick(['1e3', '-1', '0x10', ' 10', '', '1'.repeat(90)])), 'value not an integer'),
    () => ((auth.value = Number(auth.value)), 'value as a JSON number'),
    () => ((auth.nonce = hex(prng, 32)), 'another nonce'),
    () => ((auth.nonce = prng.pick(['0x', '0x12', 'zz', '0x' + 'g'.repeat(64)])), 'a nonce that is not 32 bytes'),
    () => ((auth.validBefore = String(BigInt(auth.validBefore as string) + 1n)), 'validBefore moved'),
    () => ((auth.validAfter = '-1'), 'validAfter negative'),
    () => (delete auth[prng.pick(Object.keys(auth))], 'an authorization field missing'),
    () => ((payload.authorization = null as never), 'authorization null'),
    () => ((envelope.payload = { signature: payload.signature }), 'no authorization'),
    () => ((envelope.payload = []), 'payload an array'),
    () => ((auth.from = (auth.from as string).toLowerCase().replace('0x', '0X')), 'from with a 0X prefix'),
  ])();
}

/** A Solana proof for `quote`: one the official client signed, altered (or not). */
function svmProof(prng: Prng, material: SvmMaterial): SignedProof & { quote: Quote } {
  const index = prng.int(0, material.quotes.length - 1);
  const quote = material.quotes[index]!;
  const signed = material.signed[index]!;
  const { transaction } = prng.pick(signed).payload;
  const v1 = { x402Version: 1, scheme: 'exact', network: quote.v1.network, payload: { transaction } as Record<string, unknown> };
  const bytes = Buffer.from(transaction, 'base64');
  const [label, tampered, envelopeOnly] = prng.pick<() => [string, boolean, boolean?]>([
    () => ['as signed', false],
    () => {
      // past the first signature slot: the fee payer's, blank until our facilitator signs into it
      const at = prng.int(1 + 64, bytes.length - 1);
      const changed = Buffer.from(bytes);
      changed[at] = (changed[at]! + prng.int(1, 255)) & 0xff;
      v1.payload.transaction = changed.toString('base64');
      return [`byte ${at} of ${bytes.length} changed`, true];
    },
    () => ((v1.payload.transaction = bytes.subarray(0, prng.int(0, bytes.length - 1)).toString('base64')), ['cut short', true]),
    () => ((v1.payload.transaction = Buffer.concat([bytes, prng.bytes(prng.int(1, 64))]).toString('base64')), ['bytes appended', true]),
    () => {
      // a transfer signed for another route's price: the client paid the wrong amount
      const other = material.quotes.find((q) => q.v1.maxAmountRequired !== quote.v1.maxAmountRequired);
      if (!other) return ['as signed', false];
      v1.payload.transaction = material.signed[material.quotes.indexOf(other)]![0]!.payload.transaction;
      return ['signed for another price', true];
    },
    () => ((v1.network = prng.pick(['solana-devnet', 'base', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'])), ['another network named', true, true]),
    () => ((v1.payload.transaction = junkText(prng, 40)), ['a transaction that is not base64', true]),
    () => ((v1.payload.transaction = prng.bytes(prng.int(1, 1_300)).toString('base64')), ['random bytes as a transaction', true]),
    () => ((v1.payload = { transaction: prng.int(0, 9) }), ['a transaction that is a number', true]),
    () => ((v1.scheme = 'upto'), ['scheme upto', true, true]),
  ])();
  return { label: `svm ${label}`, quote, v1, tampered, envelopeOnly };
}

/** The v2 envelope of a v1 one: `accepted` as the 402 stated it, or with one term changed. */
function asV2(prng: Prng, quote: Quote, v1: Record<string, unknown>): { envelope: Record<string, unknown>; changed?: string } {
  const accepted: Record<string, unknown> = { ...quote.v2 };
  const envelope: Record<string, unknown> = { x402Version: 2, resource: quote.resource, accepted, payload: v1.payload };
  if (!prng.chance(0.35)) return { envelope };
  const changed = prng.pick<() => string>([
    () => ((accepted.amount = String(BigInt(quote.v2.amount) - 1n)), 'accepted.amount lowered'),
    () => ((accepted.amount = '0'), 'accepted.amount 0'),
    () => ((accepted.payTo = stranger.address), 'accepted.payTo a stranger'),
    () => ((accepted.asset = stranger.address), 'accepted.asset another token'),
    () => ((accepted.network = prng.pick(['eip155:1', 'polygon', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', ''])), 'accepted.network another'),
    () => ((accepted.scheme = prng.pick(['upto', 'EXACT', ''])), 'accepted.scheme another'),
    () => ((envelope.x402Version = prng.pick([1, 3, '2', null])), 'x402Version not 2'),
    () => (delete envelope.accepted, 'no accepted'),
    () => ((envelope.extensions = { 'payment-identifier': { info: { id: junkText(prng, 20) } } }), 'a junk payment-identifier'),
    () => ((envelope.extensions = { [junkText(prng, 8)]: junkText(prng, 8) }), 'an unknown extension'),
  ])();
  // a junk or unknown extension is not a change of the payment's terms
  return { envelope, changed: changed.includes('extension') || changed.includes('identifier') ? undefined : changed };
}

/** Puts an envelope on a wire: X-PAYMENT, PAYMENT-SIGNATURE, or both (the same payment or two different ones). */
interface OnWire {
  headers: Record<string, string>;
  wire: string;
  /** what was changed on the way, making the request a tampered one */
  changed?: string;
  /** only the v2 envelope (built from the 402, not from the v1 one) was sent */
  v2Only?: boolean;
}

function onWire(prng: Prng, quote: Quote, v1: Record<string, unknown>): OnWire {
  const v2 = asV2(prng, quote, v1);
  return prng.pick<() => OnWire>([
    () => ({ headers: { 'X-PAYMENT': encode(v1) }, wire: 'X-PAYMENT' }),
    () => ({ headers: { 'PAYMENT-SIGNATURE': encode(v2.envelope) }, wire: 'PAYMENT-SIGNATURE', ...(v2.changed ? { changed: v2.changed } : {}), v2Only: true }),
    () => ({ headers: { 'X-PAYMENT': encode(v1), 'PAYMENT-SIGNATURE': encode(v2.envelope) }, wire: 'both', ...(v2.changed ? { changed: v2.changed } : {}) }),
    () => ({ headers: { 'X-PAYMENT': encode(v2.envelope) }, wire: 'a v2 envelope in X-PAYMENT', ...(v2.changed ? { changed: v2.changed } : {}), v2Only: true }),
    () => ({ headers: { 'PAYMENT-SIGNATURE': encode(v1) }, wire: 'a v1 envelope in PAYMENT-SIGNATURE' }),
    () => ({ headers: { 'X-PAYMENT': encode(v1), 'PAYMENT-SIGNATURE': encode({ ...v2.envelope, payload: { ...(v1.payload as object), signature: '0x' + '1'.repeat(130) } }) }, wire: 'both, different payments', changed: 'two payments' }),
  ])();
}

/** An upto payment (v2 only): one the official client signed (paid during setup, or never sent), as it was or changed. */
function uptoProof(prng: Prng, upto: UptoMaterial): { label: string; headers: Record<string, string>; tampered: boolean } {
  const { envelope: signed, settled } = prng.pick(upto.proofs);
  const envelope = structuredClone(signed);
  const accepted = envelope.accepted as Record<string, unknown>;
  const payload = envelope.payload as { signature?: string; permit2Authorization?: Record<string, unknown> & { witness?: Record<string, unknown> } };
  const permit = payload.permit2Authorization ?? {};
  const [label, tampered] = prng.pick<() => [string, boolean]>([
    () => ['as signed', false],
    () => ((payload.signature = flipChar(prng, payload.signature ?? '0x00', '0123456789abcdef')), ['a signature digit changed', true]),
    () => ((payload.signature = '0x' + '0'.repeat(130)), ['an all-zero signature', true]),
    () => ((accepted.amount = String(BigInt(accepted.amount as string) * 2n)), ['accepted ceiling doubled', true]),
    () => ((accepted.amount = '1'), ['accepted ceiling 1', true]),
    () => ((accepted.scheme = 'exact'), ['accepted scheme exact', true]),
    () => ((permit.spender = stranger.address), ['another spender', true]),
    () => ((permit.deadline = '1'), ['a deadline in 1970', true]),
    () => ((permit.from = stranger.address), ['from a stranger', true]),
    () => (permit.witness && (permit.witness.to = stranger.address), ['witness to a stranger', true]),
    () => ((permit.permitted = { token: stranger.address, amount: '1' }), ['another token permitted', true]),
    () => ((permit.nonce = String(prng.int(1, 1e9))), ['another Permit2 nonce', true]),
    () => ((envelope.extensions = { eip2612GasSponsoring: { info: junkText(prng, 20) } }), ['a junk gas-sponsoring extension', false]),
  ])();
  const wire = prng.pick(['PAYMENT-SIGNATURE', 'PAYMENT-SIGNATURE', 'X-PAYMENT']);
  // upto exists on v2 only: on X-PAYMENT it is refused whatever it holds
  return { label: `upto ${settled ? 'paid' : 'unsent'} proof ${label} on ${wire}`, headers: { [wire]: encode(envelope) }, tampered: tampered || wire === 'X-PAYMENT' };
}

/** One request carrying an upto payment. */
export function fuzzUptoRequest(prng: Prng, upto: UptoMaterial): FuzzRequest {
  const { label, headers, tampered } = uptoProof(prng, upto);
  const { route } = upto;
  return { label, surface: route.surface, method: 'POST', path: route.path, headers: { 'Content-Type': 'application/json', 'X-Network': 'base', ...headers }, body: JSON.stringify(route.body), tampered };
}

/** Every string in a payload, by its path, to change one of them. */
function stringLeaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((item, index) => stringLeaves(item, [...path, index]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => stringLeaves(item, [...path, key]));
  return [];
}

/**
 * One request carrying a payment-channel voucher of the official client: as signed (the paid one is a replay, the
 * unsent one pays), or with one of its strings changed, which no channel may honour.
 */
export function fuzzChannelRequest(prng: Prng, channel: ChannelMaterial): FuzzRequest {
  const { envelope: signed, settled } = prng.pick(channel.proofs);
  const envelope = structuredClone(signed);
  const leaves = stringLeaves(envelope.payload);
  let label = 'as signed';
  let tampered = false;
  if (leaves.length > 0 && prng.int(0, 3) > 0) {
    const path = prng.pick(leaves);
    const holder = path.slice(0, -1).reduce<any>((node, key) => node[key], envelope.payload);
    const key = path.at(-1)!;
    const before = holder[key] as string;
    holder[key] = /^0x[0-9a-fA-F]+$/.test(before) ? flipChar(prng, before, '0123456789abcdef') : /^\d+$/.test(before) ? String(BigInt(before) + 1n) : `${before}x`;
    label = `payload.${path.join('.')} changed`;
    tampered = holder[key] !== before;
  }
  const { route } = channel;
  return {
    label: `channel ${settled ? 'paid' : 'unsent'} voucher ${label}`,
    surface: route.surface,
    method: 'POST',
    path: route.path,
    headers: { 'Content-Type': 'application/json', 'X-Network': 'base', 'PAYMENT-SIGNATURE': encode(envelope) },
    body: JSON.stringify(route.body),
    tampered,
  };
}

/** A request that replays a proof that paid during setup: as it was, or changed. */
function replay(prng: Prng, settled: SettledCall): { label: string; headers: Record<string, string>; body: string; tampered: boolean } {
  const headers = { ...settled.headers };
  const [name, value] = Object.entries(headers).find(([key]) => key === 'X-PAYMENT' || key === 'PAYMENT-SIGNATURE')!;
  const envelope = decode(value);
  const payload = envelope.payload as Record<string, unknown> & { signature?: string; authorization?: Record<string, unknown>; transaction?: string };
  const otherBody = settled.body.replace(/"(prompt|content|text)":"/, '"$1":"x');
  const [label, body, tampered] = prng.pick<() => [string, string, boolean]>([
    () => ['byte for byte', settled.body, false],
    () => ['with another body', otherBody, true],
    () => {
      if (payload.signature) payload.signature = '0x' + '0'.repeat(130);
      else if (payload.transaction) payload.transaction = payload.transaction.replace(/^.{8}/, 'AAAAAAAA');
      headers[name] = encode(envelope);
      return ['with a forged signature', settled.body, true];
    },
    () => {
      if (payload.signature) payload.signature = '0x' + '0'.repeat(130);
      headers[name] = encode(envelope);
      return ['with a forged signature and another body', otherBody, true];
    },
    () => {
      // not part of the payment: the same proof, so it may be honoured as the replay it is
      headers[name] = encode({ ...envelope, extra: createHash('sha256').update(value).digest('hex') });
      return ['with an extra envelope key', settled.body, false];
    },
    () => {
      const permit = payload.permit2Authorization as Record<string, unknown> | undefined;
      if (payload.authorization) payload.authorization.validBefore = String(BigInt(payload.authorization.validBefore as string) + 1n);
      else if (permit) permit.deadline = String(BigInt(permit.deadline as string) + 1n);
      else payload.transaction = `${payload.transaction} `;
      headers[name] = encode(envelope);
      return ['with a term changed', settled.body, true];
    },
  ])();
  return { label: `replay of a paid ${settled.route.path} ${label}`, headers, body, tampered };
}

/** One request carrying a generated proof. */
export async function fuzzProofRequest(prng: Prng, material: ProofMaterial): Promise<FuzzRequest> {
  const kind = prng.pick(['evm', 'evm', 'evm', 'svm', 'svm', 'junk', 'replay', 'upto']);
  if (kind === 'replay' && material.settled.length > 0) {
    const settled = prng.pick(material.settled);
    const { label, headers, body, tampered } = replay(prng, settled);
    return { label, surface: settled.route.surface, method: 'POST', path: settled.route.path, headers: { 'Content-Type': 'application/json', ...headers }, body, tampered };
  }
  if (kind === 'upto' && material.upto) return fuzzUptoRequest(prng, material.upto);
  if (kind === 'junk' || (kind === 'svm' && !material.svm)) {
    const quote = prng.pick(material.evm.quotes);
    const wire = prng.pick(['X-PAYMENT', 'PAYMENT-SIGNATURE']);
    return { label: `junk ${wire}`, surface: quote.route.surface, method: 'POST', path: quote.route.path, headers: { 'Content-Type': 'application/json', [wire]: junkHeader(prng) }, body: JSON.stringify(quote.route.body), tampered: true };
  }
  if (kind === 'svm') {
    const proof = svmProof(prng, material.svm!);
    return withWire(prng, proof.quote, proof);
  }
  const quote = prng.pick(material.evm.quotes);
  return withWire(prng, quote, await evmProof(prng, material.evm, quote));
}

function withWire(prng: Prng, quote: Quote, proof: SignedProof): FuzzRequest {
  const { headers, wire, changed, v2Only } = onWire(prng, quote, proof.v1);
  const proofTampered = proof.tampered && !(proof.envelopeOnly && v2Only);
  const network = prng.pick([undefined, undefined, quote.v1.network, 'polygon', 'solana', 'nope']);
  const networkTamper = network !== undefined && network !== quote.v1.network;
  return {
    label: `${proof.label} on ${wire}${changed ? `, ${changed}` : ''}${network ? `, X-Network ${network}` : ''}`,
    surface: quote.route.surface,
    method: 'POST',
    path: quote.route.path,
    headers: { 'Content-Type': 'application/json', ...(network ? { 'X-Network': network } : {}), ...headers },
    body: JSON.stringify(quote.route.body),
    tampered: proofTampered || changed !== undefined || networkTamper,
  };
}
