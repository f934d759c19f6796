// A tool call whose settlement fails after the work succeeded (the payer spent the signed authorization's nonce
// elsewhere while the model was answering): the x402 MCP transport's settlement-failure result, the requirements
// again, `_meta["x402/payment-response"]` { success: false }, and no tool content: the result is withheld, nothing
// reaches the seller.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, parseSignature, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { startTestService } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { signEvmProof } from './support/evm-proof.ts';
import { CHAT_PATH, startOpenAIUpstream, type OpenAIUpstream } from './support/openai-upstream.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { eip3009Abi } from '../src/payments/facilitators/evm/eip3009-abi.ts';
import type { RunningService } from '../src/service.ts';

const KEY_ENV = 'MCP_SETTLEMENT_TEST_KEY';
const BASE_CHAIN_ID = 8453;
const INPUT = { model: 'up/chat', prompt: 'Hello', max_tokens: 8, network: 'base' };

let upstream: OpenAIUpstream;
let service: RunningService;
let mcp: Client;

before(async () => {
  upstream = await startOpenAIUpstream();
  process.env[KEY_ENV] = 'sk-test';
  service = await startTestService({
    networks: ['base'],
    config: {
      providers: { mock: { type: 'openai-compatible', baseURL: upstream.baseURL, apiKeyEnv: KEY_ENV, maxRetries: 0 } },
      models: [
        ...embeddedModels(),
        { id: 'up/chat', provider: 'mock', upstreamModel: 'mock-chat-1', capability: 'chat', maxTokens: 256, defaultMaxTokens: 16, price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' } },
      ],
    },
  });
  mcp = new Client({ name: 'mcp-settlement-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`)));
});
after(async () => {
  await mcp?.close();
  await service?.stop();
  await upstream?.close();
  delete process.env[KEY_ENV];
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('a settlement that fails returns the requirements and the failed receipt, and no content', async () => {
  const buyer = await fundedEvmBuyer(service, ['base']);
  const chain = service.sandbox!.chains.get('base')!;
  const payTo = service.rails.get('base')!.payTo;
  const unpaid = (await mcp.callTool({ name: 'chat', arguments: INPUT })) as CallToolResult;
  const required = unpaid.structuredContent as unknown as PaymentRequired;
  const payment = await registerExactEvmScheme(new x402Client(), { signer: buyer }).createPaymentPayload(required);
  const { nonce } = (payment.payload as { authorization: { nonce: Hex } }).authorization;
  const payToBefore = await balanceOf(service, 'base', payTo);

  // the model holds its answer; meanwhile the payer uses the same nonce for a transfer to someone else
  upstream.fail(CHAT_PATH, { kind: 'hold' });
  const answer = mcp.callTool({ name: 'chat', arguments: INPUT, _meta: { 'x402/payment': payment } }) as Promise<CallToolResult>;
  await until(() => upstream.received(CHAT_PATH).length === 1);
  const accepted = payment.accepted;
  const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
  const frontRun = JSON.parse(
    Buffer.from(
      await signEvmProof(buyer, { scheme: 'exact', network: 'base', maxAmountRequired: accepted.amount, payTo: accepted.payTo, asset: accepted.asset, maxTimeoutSeconds: accepted.maxTimeoutSeconds, extra: accepted.extra, resource: '', description: '', mimeType: '' } as never, BASE_CHAIN_ID, { nonce, to: elsewhere }),
      'base64',
    ).toString('utf8'),
  ) as { payload: { signature: Hex; authorization: Record<string, string> } };
  const { r, s, v, yParity } = parseSignature(frontRun.payload.signature);
  const a = frontRun.payload.authorization;
  const viemChain = { id: BASE_CHAIN_ID, name: 'base (sandbox)', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [chain.rpcUrl] } } };
  const hash = await createWalletClient({ account: buyer, chain: viemChain, transport: http(chain.rpcUrl) }).writeContract({
    address: chain.asset as Hex,
    abi: eip3009Abi,
    functionName: 'transferWithAuthorization',
    args: [a.from as Hex, a.to as Hex, BigInt(a.value!), BigInt(a.validAfter!), BigInt(a.validBefore!), a.nonce as Hex, Number(v ?? 27n + BigInt(yParity)), r, s],
    gas: 200_000n,
  });
  assert.equal((await createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) }).waitForTransactionReceipt({ hash })).status, 'success');
  upstream.release();

  const result = await answer;
  assert.equal(result.isError, true);
  const structured = result.structuredContent as Record<string, any>;
  assert.equal(structured.x402Version, 2);
  assert.ok(structured.accepts.length > 0, 'the requirements again');
  assert.match(structured.error, /settlement_failed/);
  const receipt = result._meta?.['x402/payment-response'] as Record<string, unknown>;
  assert.equal(receipt.success, false);
  assert.ok(receipt.errorReason);
  assert.equal(result.content.length, 1, 'no tool content: only the PaymentRequired as text');
  assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), structured);
  assert.equal(await balanceOf(service, 'base', payTo), payToBefore, 'nothing reached the seller');
});
