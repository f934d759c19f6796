// Child process of the bench: the peer the gateway is compared with. The official x402 v2 stack as its README
// sets it up: a Hono app behind @x402/hono's paymentMiddleware, whose resource server verifies and settles through
// the official in-process facilitator (@x402/core x402Facilitator with @x402/evm's exact scheme, viem signer; or
// with family "svm", @x402/svm's exact scheme with a kit fee-payer signer), on the same sandbox chain and token
// the gateway uses. Its paid image route draws the same picture with the same built-in engine (PreviewImageModel)
// and answers it as base64 JSON; with `chatAmount`, its paid chat route runs the same demo chat model (llama.cpp,
// the same seed and max_tokens) at that fixed price and answers the text: no ledger, no media store, no request log.
// Settings: BENCH_PEER (JSON: EVM: rpcUrl, chainId, asset, payTo, amount, eip712 {name, version}, settlementKey;
// Solana: family "svm", rpcUrl, network (CAIP-2), asset, payTo, amount, feePayerSeed (32 bytes as numbers)).
// Prints one JSON line {"url", "pid"} once listening; stops when stdin closes or on SIGTERM/SIGINT.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { SchemeNetworkFacilitator, SchemeNetworkServer } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { BatchSettlementEvmScheme as BatchSettlementFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { BatchSettlementEvmScheme as BatchSettlementServerScheme } from '@x402/evm/batch-settlement/server';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitatorScheme } from '@x402/svm/exact/facilitator';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { createKeyPairSignerFromPrivateKeyBytes } from '@solana/kit';
import { nonceManager, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PreviewImageModel } from '../src/providers/local/preview-image-model.ts';
import { createDemoChatModel } from '../src/providers/local/local-chat-catalog.ts';
import { officialEvmSigner } from '../test/support/official-evm-signer.ts';

export interface PeerSettings {
  family?: 'evm';
  rpcUrl: string;
  chainId: number;
  asset: Hex;
  payTo: Hex;
  amount: string;
  eip712: { name: string; version: string };
  settlementKey: Hex;
  /** exact (default), or batch-settlement: payment channels with the official server scheme (in-memory channel
   *  storage) and facilitator scheme (its own receiver authorizer key) */
  scheme?: 'exact' | 'batch-settlement';
  /** the chat route's price (atomic units); no chat route without it */
  chatAmount?: string;
}

export interface SvmPeerSettings {
  family: 'svm';
  rpcUrl: string;
  network: `${string}:${string}`;
  asset: string;
  payTo: string;
  amount: string;
  /** the fee payer's 32-byte private key */
  feePayerSeed: number[];
}

export const PEER_IMAGE_PATH = '/api/v1/ai/images';
export const PEER_CHAT_PATH = '/api/v1/ai/chat';

const settings = JSON.parse(process.env.BENCH_PEER ?? '') as PeerSettings | SvmPeerSettings;

/** The official EVM facilitator and server schemes, as the x402 facilitator examples build them. */
function evmSchemes(settings: PeerSettings) {
  const network = `eip155:${settings.chainId}` as const;
  // viem's nonce manager, as viem advises for concurrent sends from one local account (without it, concurrent
  // settlements read the same pending nonce and most are refused)
  const account = privateKeyToAccount(settings.settlementKey, { nonceManager });
  const signer = officialEvmSigner({ rpcUrl: settings.rpcUrl, chainId: settings.chainId, account });
  if (settings.scheme === 'batch-settlement') {
    const authorizer = privateKeyToAccount(generatePrivateKey());
    return {
      network,
      facilitator: new BatchSettlementFacilitatorScheme(signer, authorizer),
      server: new BatchSettlementServerScheme(settings.payTo, { receiverAuthorizerSigner: authorizer, withdrawDelay: 900 }),
      extra: { ...settings.eip712 },
    };
  }
  return { network, facilitator: new ExactEvmFacilitatorScheme(signer), server: new ExactEvmServerScheme(), extra: { ...settings.eip712 } };
}

/** The official Solana facilitator (a kit fee-payer signer on the sandbox RPC) and server schemes. */
async function svmSchemes(settings: SvmPeerSettings) {
  const feePayer = await createKeyPairSignerFromPrivateKeyBytes(Uint8Array.from(settings.feePayerSeed));
  const signer = toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: settings.rpcUrl });
  return { network: settings.network, facilitator: new ExactSvmFacilitatorScheme(signer), server: new ExactSvmServerScheme(), extra: {} };
}

const schemes: { network: `${string}:${string}`; facilitator: SchemeNetworkFacilitator; server: SchemeNetworkServer; extra: Record<string, unknown> } =
  settings.family === 'svm' ? await svmSchemes(settings) : evmSchemes(settings);
const network = schemes.network;
const facilitator = new x402Facilitator().register(network, schemes.facilitator);
const inProcess: FacilitatorClient = {
  verify: (payload, requirements) => facilitator.verify(payload, requirements),
  settle: (payload, requirements) => facilitator.settle(payload, requirements),
  getSupported: async () => facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
};
const resourceServer = new x402ResourceServer(inProcess).register(network, schemes.server);

const engine = new PreviewImageModel();
const chatAmount = settings.family !== 'svm' ? settings.chatAmount : undefined;
const accepts = (amount: string) => ({
  scheme: settings.family !== 'svm' && settings.scheme === 'batch-settlement' ? 'batch-settlement' : 'exact',
  network,
  payTo: settings.payTo,
  price: { amount, asset: settings.asset, extra: schemes.extra },
});
const app = new Hono();
app.use(
  paymentMiddleware(
    {
      [`POST ${PEER_IMAGE_PATH}`]: { accepts: accepts(settings.amount), description: 'A generated image', mimeType: 'application/json' },
      ...(chatAmount ? { [`POST ${PEER_CHAT_PATH}`]: { accepts: accepts(chatAmount), description: 'A chat answer', mimeType: 'application/json' } } : {}),
    },
    resourceServer,
  ),
);
if (chatAmount) {
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-peer-'));
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const chatModel = createDemoChatModel({ dataDir });
  app.post(PEER_CHAT_PATH, async (c) => {
    const body = (await c.req.json()) as { prompt: string; max_tokens: number; options?: { seed?: number } };
    const result = await chatModel.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: body.prompt }] }],
      maxOutputTokens: body.max_tokens,
      ...(body.options?.seed === undefined ? {} : { seed: body.options.seed }),
    });
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    return c.json({ text, usage: result.usage });
  });
}
app.post(PEER_IMAGE_PATH, async (c) => {
  const body = (await c.req.json()) as { prompt: string; size: `${number}x${number}`; n: number };
  const result = await engine.doGenerate({ prompt: body.prompt, n: body.n, size: body.size, aspectRatio: undefined, seed: undefined, providerOptions: {}, files: undefined, mask: undefined });
  const images = result.images as Uint8Array[];
  return c.json({ created: Math.floor(Date.now() / 1000), data: images.map((png) => ({ b64_json: Buffer.from(png).toString('base64') })) });
});

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${info.port}`, pid: process.pid })}\n`);
});
const shutdown = () => server.close(() => process.exit(0));
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.stdin.on('end', shutdown);
process.stdin.resume();
