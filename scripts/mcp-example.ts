// The gateway's MCP tools from an agent's side: connect with the MCP SDK client over Streamable HTTP, list the
// tools, and pay for one call through x402's MCP transport (src/client/mcp.ts).
//
//   node scripts/mcp-example.ts [--url http://127.0.0.1:4021] [--network base|solana|...] [--max-price 0.10] ["prompt"]
//
// The buyer key comes from X402_EVM_PRIVATE_KEY (EVM networks) or X402_SOLANA_SECRET_KEY (Solana), never from an
// argument. Against a sandbox gateway without a key, a fresh key is made and funded from its faucet.
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { callPaidTool, mcpPayer } from '../src/client/mcp.ts';
import { formatUsdc, generateSolanaSecretKey, isSolanaNetwork, parseUsdc, solanaSigner } from '../src/client/index.ts';
import { solanaRpcUrls } from '../src/client/solana-rpc.ts';

const { values, positionals } = parseArgs({
  options: { url: { type: 'string' }, network: { type: 'string' }, 'max-price': { type: 'string' } },
  allowPositionals: true,
});
const url = (values.url ?? process.env.X402_AI_URL ?? 'http://127.0.0.1:4021').replace(/\/+$/, '');
const network = values.network ?? process.env.X402_AI_NETWORK ?? 'base';
const maxPrice = parseUsdc(values['max-price'] ?? '0.10');
const prompt = positionals[0] ?? 'Write one sentence about lighthouses.';

/** The buyer's key from the environment, else (sandbox only) a fresh one funded by the faucet. */
async function buyerKeys() {
  const solana = isSolanaNetwork(network);
  const evmPrivateKey = (process.env.X402_EVM_PRIVATE_KEY || undefined) as `0x${string}` | undefined;
  const solanaSecretKey = process.env.X402_SOLANA_SECRET_KEY || undefined;
  if (solana ? solanaSecretKey : evmPrivateKey) return { evmPrivateKey, solanaSecretKey };
  const fresh = solana ? { solanaSecretKey: generateSolanaSecretKey() } : { evmPrivateKey: generatePrivateKey() };
  const address = fresh.solanaSecretKey ? (await solanaSigner(fresh.solanaSecretKey)).address : privateKeyToAccount(fresh.evmPrivateKey!).address;
  const funded = await fetch(`${url}/sandbox/faucet`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ network, address }) });
  if (!funded.ok) throw new Error(`no key in the environment, and ${url} has no sandbox faucet (${funded.status}): set X402_EVM_PRIVATE_KEY or X402_SOLANA_SECRET_KEY`);
  console.log(`sandbox buyer ${address}, funded from the faucet`);
  return fresh;
}

const mcp = new Client({ name: 'x402-ai-mcp-example', version: '1.0.0' });
await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
try {
  const { tools } = await mcp.listTools();
  console.log(`tools at ${url}/mcp:`);
  for (const tool of tools) console.log(`  ${tool.name.padEnd(16)} ${tool.description?.split('. ')[0] ?? ''}`);

  // the free tool: the models and their prices; the first chat model answers
  const listing = (await mcp.callTool({ name: 'list_models', arguments: {} })).structuredContent as { models: { id: string; capability: string; priceText: string }[] };
  const model = listing.models.find((m) => m.capability === 'chat');
  if (!model) throw new Error('the gateway sells no chat model');
  console.log(`\nchat model ${model.id}: ${model.priceText}`);

  const keys = await buyerKeys();
  const payer = await mcpPayer({ ...keys, ...(keys.solanaSecretKey !== undefined ? { solanaRpcUrls: await solanaRpcUrls({ baseUrl: url }) } : {}) });
  const paid = await callPaidTool(mcp, 'chat', { model: model.id, prompt, max_tokens: 48 }, { payer, maxPrice, network });
  const text = paid.result.content.find((block) => block.type === 'text');
  console.log(`\nchat: ${text?.type === 'text' ? text.text : ''}`);
  console.log(`paid ${formatUsdc(paid.charged)} USDC on ${String(paid.receipt.network)} · tx ${String(paid.receipt.transaction)}`);
} finally {
  await mcp.close();
}
