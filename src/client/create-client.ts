// The paying client: quote (402) -> check maxPrice -> sign with the official x402 client schemes ->
// pay -> result + receipt. A pending settlement is retried with the SAME proof, never paid twice.
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import { getBase58Decoder, signBytes, type KeyPairSigner } from '@solana/kit';
import type { ChatRequest, ChatResponse, ImageRequest, ImageResponse, TtsRequest, TtsResponse } from '../api/schemas.ts';
import { GatewayError, MaxPriceExceededError, NetworkNotOfferedError } from './errors.ts';
import { offerAmount, signableOffers } from './offer-terms.ts';
import { explainingFetch } from './reach.ts';
import { fastEvmSigner } from './fast-signer.ts';
import { libsecp256k1Account } from '../x402/libsecp256k1-account.ts';
import { solanaSecretKeyBytes, solanaSigner, type SolanaSecretKey } from './solana-key.ts';
import { isSolanaNetwork, solanaRpcUrls } from './solana-rpc.ts';
import { receiptChallenge } from '../x402/receipt-challenge.ts';

export interface ClientOptions {
  baseUrl: string;
  /** network to pay on, sent as X-Network */
  network: string;
  /** EVM buyer key (0x-prefixed hex) */
  evmPrivateKey?: `0x${string}`;
  /** Solana buyer key: the 64-byte secret key as bytes, a solana-keygen JSON array, or base58 */
  solanaSecretKey?: SolanaSecretKey;
  /**
   * Solana JSON-RPC the payment transaction is built against. Default: the sandbox chain's RPC when the
   * gateway's /healthz says mode "sandbox", else the network's public endpoint.
   */
  solanaRpcUrl?: string;
  /** hard cap per request in USDC atomic units; a higher quote is refused before signing */
  maxPrice: bigint;
  /** pay only this address (the gateway operator's payTo); an offer to another is never signed. Default: any payee */
  payTo?: string;
  /** how many times a pending settlement is asked about again (with the same proof); default 20 */
  pendingRetries?: number;
  fetch?: typeof fetch;
  /** told what a paid call is waiting for, e.g. to show progress */
  onProgress?: (step: PaymentStep) => void;
  /** registers further official client schemes on the x402 client (solanaSecretKey, when given, takes the Solana networks) */
  configure?: (client: x402Client) => void;
}

/** what a paid call is doing: asking the price, signing the proof, waiting for the paid work and its settlement */
export type PaymentStep = 'quoting' | 'signing' | 'working' | 'settlement-pending';

export interface Receipt {
  success: boolean;
  transaction: string;
  network: string;
  payer: string;
  /** price paid, atomic units */
  amount: bigint;
}

export interface Paid<T> {
  result: T;
  receipt: Receipt;
}

/** GET /api/v1/payments/:id: the public facts, and `result` (the paid call's 200 body) for its payer */
export interface PaymentLookup {
  key: string;
  state: string;
  network: string;
  amount: string;
  payer: string;
  transaction: string | null;
  resultAvailable: boolean;
  result?: unknown;
  [fact: string]: unknown;
}

export interface GatewayClient {
  chat(request: ChatRequest): Promise<Paid<ChatResponse>>;
  images(request: ImageRequest): Promise<Paid<ImageResponse>>;
  tts(request: TtsRequest): Promise<Paid<TtsResponse>>;
  /** the price the gateway quotes for a request, without paying */
  quote(path: string, body: unknown): Promise<bigint>;
  /**
   * A payment by transaction hash or payment key. When it is settled with a stored result and this client
   * holds a key of its chain, the payer's signature of the receipt challenge gets that result back.
   */
  payment(id: string): Promise<PaymentLookup>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createClient(options: ClientOptions): GatewayClient {
  const doFetch = explainingFetch(options.fetch ?? fetch);
  const progress = options.onProgress ?? (() => {});
  const base = options.baseUrl.replace(/\/+$/, '');
  // Spend limits are ours (maxPrice, checked before signing), so the library's own defaults are off.
  const x402 = x402Client.fromConfig({ schemes: [], spendControls: false });
  const evmAccount = options.evmPrivateKey ? libsecp256k1Account(options.evmPrivateKey) : undefined;
  if (evmAccount) registerExactEvmScheme(x402, { signer: fastEvmSigner(evmAccount) });
  options.configure?.(x402);
  const http = new x402HTTPClient(x402);

  // Solana needs async work (key import, the RPC URL from /healthz), done once, before the first signature.
  const solanaKey = options.solanaSecretKey === undefined ? undefined : solanaSecretKeyBytes(options.solanaSecretKey);
  let solanaKeySigner: Promise<KeyPairSigner> | undefined;
  /** the key's signer, imported once (a key pair that does not match fails the same way every time) */
  const solanaBuyer = (key: Uint8Array) => (solanaKeySigner ??= solanaSigner(key));
  let solanaReady: Promise<void> | undefined;
  const readyToSign = (): Promise<void> => {
    if (!solanaKey) return Promise.resolve();
    solanaReady ??= (async () => {
      const [signer, rpcUrls] = await Promise.all([
        solanaBuyer(solanaKey),
        solanaRpcUrls({ baseUrl: base, rpcUrl: options.solanaRpcUrl, fetch: doFetch }),
      ]);
      for (const [network, rpcUrl] of Object.entries(rpcUrls)) x402.registerV1(network, new ExactSvmSchemeV1(signer, { rpcUrl }));
    })().catch((error: unknown) => {
      solanaReady = undefined;
      throw error;
    });
    return solanaReady;
  };

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    doFetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': options.network, ...headers },
      body: JSON.stringify(body),
    });

  async function paymentRequired(response: Response) {
    const body = await response.json().catch(() => undefined);
    if (response.status !== 402) throw new GatewayError(response.status, body);
    // This client pays on the v1 wire (its Solana scheme is v1): the v1 body, not PAYMENT-REQUIRED.
    const required = http.getPaymentRequiredResponse(() => null, body);
    // the exact offers of the network asked for: the one this client signs is the one its cap was checked against
    const accepts = required.accepts.filter((a) => (a.network === options.network || options.network === '*') && a.scheme === 'exact');
    if (accepts.length === 0) throw new NetworkNotOfferedError(options.network, required.accepts.map((a) => String(a.network)));
    return { ...required, accepts: [signableOffers(accepts, options.network, options.payTo)[0]!] };
  }

  async function quote(path: string, body: unknown): Promise<bigint> {
    const required = await paymentRequired(await post(path, body));
    return offerAmount(required.accepts[0]!);
  }

  async function pay<T>(path: string, body: unknown): Promise<Paid<T>> {
    progress('quoting');
    const required = await paymentRequired(await post(path, body));
    const price = offerAmount(required.accepts[0]!);
    if (price > options.maxPrice) throw new MaxPriceExceededError(price, options.maxPrice);

    progress('signing');
    await readyToSign();
    const proof = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
    for (let attempt = 0; ; attempt++) {
      progress(attempt === 0 ? 'working' : 'settlement-pending');
      const response = await post(path, body, proof);
      const result = await response.json().catch(() => undefined);
      if (response.status === 200) {
        const settled = http.getPaymentSettleResponse((name) => response.headers.get(name));
        return {
          result: result as T,
          receipt: { success: settled.success, transaction: settled.transaction, network: String(settled.network), payer: settled.payer ?? '', amount: price },
        };
      }
      const code = (result as { code?: string } | undefined)?.code;
      const retryable = response.status === 409 && (code === 'settlement_pending' || code === 'payment_in_progress');
      if (!retryable || attempt >= (options.pendingRetries ?? 20)) throw new GatewayError(response.status, result);
      await sleep(Math.min(Number(response.headers.get('retry-after') ?? 1), 10) * 1000);
    }
  }

  /**
   * X-Payer-* headers proving this client paid (EIP-191 on EVM, base58 ed25519 on Solana); none when this
   * client holds no key of that chain or the payer is someone else.
   */
  async function payerProof(id: string, { network, payer }: PaymentLookup): Promise<Record<string, string> | undefined> {
    const timestamp = Math.floor(Date.now() / 1000);
    const message = receiptChallenge(id, timestamp);
    let signature: string;
    if (isSolanaNetwork(network)) {
      const signer = solanaKey && (await solanaBuyer(solanaKey));
      if (!signer || signer.address !== payer) return undefined;
      signature = getBase58Decoder().decode(await signBytes(signer.keyPair.privateKey, new TextEncoder().encode(message)));
    } else {
      if (!evmAccount || evmAccount.address.toLowerCase() !== payer.toLowerCase()) return undefined;
      signature = await evmAccount.signMessage({ message });
    }
    return { 'X-Payer-Timestamp': String(timestamp), 'X-Payer-Signature': signature };
  }

  async function payment(id: string): Promise<PaymentLookup> {
    const lookup = async (headers?: Record<string, string>) => {
      const response = await doFetch(`${base}/api/v1/payments/${encodeURIComponent(id)}`, { headers });
      const body = await response.json().catch(() => undefined);
      if (!response.ok) throw new GatewayError(response.status, body);
      return body as PaymentLookup;
    };
    const facts = await lookup();
    const proof = facts.state === 'settled' && facts.resultAvailable ? await payerProof(id, facts) : undefined;
    return proof ? lookup(proof) : facts;
  }

  return {
    chat: (request) => pay('/api/v1/ai/chat', request),
    images: (request) => pay('/api/v1/ai/images', request),
    tts: (request) => pay('/api/v1/ai/tts', request),
    quote,
    payment,
  };
}
