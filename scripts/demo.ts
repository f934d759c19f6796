// npm run demo: the product tour. Starts the gateway in sandbox mode (no config read), and on each demo
// network (an EVM chain and Solana) funds a fresh buyer from the sandbox faucet and pays for one chat, one
// image and one speech, printing each result, its price and its transaction. The gateway stops with the demo,
// and its media links with it: the image and the speech are saved to files (DEMO_OUT, default ./x402-demo/),
// whose paths are printed, never over an existing file.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, relative } from 'node:path';
import { saveWithoutOverwriting } from '../src/client/output-file.ts';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config/load.ts';
import { startService } from '../src/service.ts';
import {
  createClient,
  formatUsdc,
  generateSolanaSecretKey,
  isSolanaNetwork,
  parseUsdc,
  solanaSigner,
  type ClientOptions,
  type GatewayClient,
  type Receipt,
} from '../src/client/index.ts';
import type { NetworkName } from '../src/x402/networks.ts';

const DEMO_NETWORKS: NetworkName[] = ['base', 'solana'];
const outDir = process.env.DEMO_OUT || 'x402-demo';
mkdirSync(outDir, { recursive: true });

const dataDir = mkdtempSync(join(tmpdir(), 'x402-demo-'));
// the gateway's own lines (its warnings) are for the person reading the tour too: readable, wherever stdout goes
const service = await startService(
  loadConfig({}, { port: 0, dataDir, logLevel: 'warn', logFormat: 'pretty', sandbox: { enabled: true, networks: DEMO_NETWORKS } }),
);
const line = (receipt: Receipt) => `   paid ${formatUsdc(receipt.amount)} USDC on ${receipt.network} · tx ${receipt.transaction}`;

/** A fresh buyer for the network: its address (to fund) and its key, as createClient takes it. */
async function freshBuyer(network: NetworkName): Promise<{ address: string; key: Pick<ClientOptions, 'evmPrivateKey' | 'solanaSecretKey'> }> {
  if (isSolanaNetwork(network)) {
    const solanaSecretKey = generateSolanaSecretKey();
    return { address: (await solanaSigner(solanaSecretKey)).address, key: { solanaSecretKey } };
  }
  const evmPrivateKey = generatePrivateKey();
  return { address: privateKeyToAccount(evmPrivateKey).address, key: { evmPrivateKey } };
}

async function fund(network: NetworkName, address: string): Promise<void> {
  const response = await fetch(`${service.url}/sandbox/faucet`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ network, address, amount: '5000000' }),
  });
  if (!response.ok) throw new Error(`the faucet answered ${response.status}: ${await response.text()}`);
  const funded = (await response.json()) as { balance: string };
  console.log(`funded ${address} with test USDC on ${network}: balance ${formatUsdc(BigInt(funded.balance))} USDC`);
}

/** Saves a paid media file before the gateway (and its link) goes away; returns where, as a path to open. */
async function save(url: string, name: string): Promise<string> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const path = await saveWithoutOverwriting(join(outDir, `${name}${extname(new URL(url).pathname)}`), new Uint8Array(await response.arrayBuffer()));
  return relative(process.cwd(), path).startsWith('..') ? path : relative(process.cwd(), path);
}

async function tour(network: NetworkName, client: GatewayClient): Promise<void> {
  const chat = await client.chat({ model: 'local/demo-bigram', prompt: 'Tell me about the harbour', max_tokens: 24 });
  console.log(`\n[${network}] chat (${chat.result.model}, ${chat.result.usage.tokens} tokens):\n   ${chat.result.response}\n${line(chat.receipt)}`);
  const images = await client.images({ prompt: 'a lighthouse at dusk', n: 1, size: '256x256' });
  console.log(`[${network}] image (${images.result.model}): saved ${await save(images.result.images[0]!, `${network}-image`)}\n${line(images.receipt)}`);
  const speech = await client.tts({ text: 'Paid per request, settled on chain.', voice: 'en-us' });
  console.log(`[${network}] speech (${speech.result.model}): saved ${await save(speech.result.audioUrl, `${network}-speech`)}\n${line(speech.receipt)}`);
}

try {
  console.log(`gateway in sandbox mode at ${service.url}`);
  for (const network of DEMO_NETWORKS) {
    const buyer = await freshBuyer(network);
    await fund(network, buyer.address);
    // on Solana the client finds the sandbox chain's RPC through the gateway's /healthz
    await tour(network, createClient({ baseUrl: service.url, network, ...buyer.key, maxPrice: parseUsdc('0.10') }));
  }
  console.log(`\ndemo complete: the image and speech files are in ${outDir}/ (the gateway and its media links stop now)`);
} finally {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
