// The paying client: quote (402) -> check maxPrice -> sign with the official x402 client schemes ->
// pay -> result + receipt. A pending settlement is retried with the SAME proof, never paid twice.
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmSchemeV1 } from '@x402/svm/exact/v1/client';
import { privateKeyToAccount } from 'viem/accounts';
import type { ChatRequest, ChatResponse, ImageRequest, ImageResponse, TtsRequest, TtsResponse } from '../api/schemas.ts';
import { GatewayError, MaxPriceExceededError } from './errors.ts';
import { solanaSecretKeyBytes, solanaSigner, type SolanaSecretKey } from './solana-key.ts';
import { solanaRpcUrls } from './solana-rpc.ts';

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
  /** how many times a pending settlement is asked about again (with the same proof); default 20 */
  pendingRetries?: number;
  fetch?: typeof fetch;
  /** registers further official client schemes on the x402 client (solanaSecretKey, when given, takes the Solana networks) */
  configure?: (client: x402Client) => void;
}

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

export interface GatewayClient {
  chat(request: ChatRequest): Promise<Paid<ChatResponse>>;
  images(request: ImageRequest): Promise<Paid<ImageResponse>>;
  tts(request: TtsRequest): Promise<Paid<TtsResponse>>;
  /** the price the gateway quotes for a request, without paying */
  quote(path: string, body: unknown): Promise<bigint>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createClient(options: ClientOptions): GatewayClient {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  // Spend limits are ours (maxPrice, checked before signing), so the library's own defaults are off.
  const x402 = x402Client.fromConfig({ schemes: [], spendControls: false });
  if (options.evmPrivateKey) registerExactEvmScheme(x402, { signer: privateKeyToAccount(options.evmPrivateKey) });
  options.configure?.(x402);
  const http = new x402HTTPClient(x402);

  // Solana needs async work (key import, the RPC URL from /healthz), done once, before the first signature.
  const solanaKey = options.solanaSecretKey === undefined ? undefined : solanaSecretKeyBytes(options.solanaSecretKey);
  let solanaReady: Promise<void> | undefined;
  const readyToSign = (): Promise<void> => {
    if (!solanaKey) return Promise.resolve();
    solanaReady ??= (async () => {
      const [signer, rpcUrls] = await Promise.all([
        solanaSigner(solanaKey),
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
    const required = http.getPaymentRequiredResponse((name) => response.headers.get(name), body);
    const accepts = required.accepts.filter((a) => a.network === options.network || options.network === '*');
    if (accepts.length === 0) throw new GatewayError(402, body);
    return { ...required, accepts };
  }

  function amountOf(requirement: { maxAmountRequired?: string; amount?: string }): bigint {
    return BigInt(requirement.maxAmountRequired ?? requirement.amount ?? '0');
  }

  async function quote(path: string, body: unknown): Promise<bigint> {
    const required = await paymentRequired(await post(path, body));
    return amountOf(required.accepts[0]!);
  }

  async function pay<T>(path: string, body: unknown): Promise<Paid<T>> {
    const required = await paymentRequired(await post(path, body));
    const price = amountOf(required.accepts[0]!);
    if (price > options.maxPrice) throw new MaxPriceExceededError(price, options.maxPrice);

    await readyToSign();
    const proof = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
    for (let attempt = 0; ; attempt++) {
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

  return {
    chat: (request) => pay('/api/v1/ai/chat', request),
    images: (request) => pay('/api/v1/ai/images', request),
    tts: (request) => pay('/api/v1/ai/tts', request),
    quote,
  };
}
