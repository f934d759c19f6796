// The MCP 2026-07-28 wire as a paying agent meets it: the MCP SDK v2 client (@modelcontextprotocol/client, pinned to
// 2026-07-28) pays `chat` and `generate_image` through the x402 MCP transport's extension binding when it
// advertises `org.x402/payment` (a `payment_required` result), and through the tool-result binding when it does not;
// a batch-settlement client pays three calls with one deposit; a paid image is read back as an MCP resource by its
// payer, and refused to anyone else. Payments are signed by the official x402 clients, each charge read on-chain.
// (The MCP SDK v1 client on 2025-11-25 pays the same tools in test/mcp.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, SdkError, type CallToolResult } from '@modelcontextprotocol/client';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, http, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer } from './support/sandbox-wallet.ts';
import { mcpSignIn, paidMcpFetch } from '../src/client/index.ts';
import { NETWORKS } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

interface Tool {
  name: string;
  path: string;
  capability: string;
  input: Record<string, unknown> & { prompt: string };
}

const CHAT: Tool = { name: 'chat', path: '/api/v1/ai/chat', capability: 'chat', input: { model: 'local/demo-bigram', prompt: 'Hello from 2026', max_tokens: 8 } };
const IMAGE: Tool = { name: 'generate_image', path: '/api/v1/ai/images', capability: 'image', input: { prompt: 'a blue heron', n: 1, size: '256x256' } };
const BASE = NETWORKS.base.caip2 as `${string}:${string}`;

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'] });
});
after(() => service?.stop());

/** Every JSON-RPC answer the client received, as it was on the wire (the SDK lifts `resultType` off the results). */
function recording(base: typeof fetch = fetch): { fetch: typeof fetch; answers: Record<string, any>[] } {
  const answers: Record<string, any>[] = [];
  return {
    answers,
    fetch: async (input, init) => {
      const response = await base(input, init);
      if (response.headers.get('content-type')?.includes('application/json')) answers.push((await response.clone().json()) as Record<string, any>);
      return response;
    },
  };
}

/** An MCP SDK v2 client on the 2026-07-28 wire, advertising the x402 payment extension or not. */
async function connect(options: { extension: boolean; fetch?: typeof fetch }): Promise<Client> {
  const client = new Client(
    { name: 'agent-2026', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: options.extension ? { extensions: { 'org.x402/payment': {} } } : {} },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), options.fetch ? { fetch: options.fetch } : {}));
  assert.equal(client.getProtocolEra(), 'modern');
  return client;
}

const exactPayer = (buyer: PrivateKeyAccount) => registerExactEvmScheme(new x402Client(), { signer: buyer });
const chain = () => createPublicClient({ transport: http(service.sandbox!.chains.get('base')!.rpcUrl) });
/** The official batch-settlement client of `buyer`, its channel state its own (in memory), over MCP. */
const channelAgent = (buyer: PrivateKeyAccount, extension = true) => {
  const payer = new x402Client().register(BASE, new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain()), { depositStrategy: () => '3000000' }));
  return connect({ extension, fetch: paidMcpFetch({ payer, maxPrice: 1_000_000n, network: 'base' }) });
};
const payTo = () => service.rails.get('base')!.payTo;
const receiptOf = (result: CallToolResult) => result._meta?.['x402/payment-response'] as { success: boolean; transaction: string; payer: string; amount: string; extra?: any };

/** successful generations so far, from /metrics */
async function generations(capability: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('generations_total{') && l.includes(`capability="${capability}"`) && l.includes('outcome="success"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The HTTP route's requirements for the same body, on base: what an MCP tool must offer too. */
async function httpAccepts(path: string, body: unknown): Promise<unknown[]> {
  const response = await postJson(`${service.url}${path}`, body, { 'X-Network': 'base' });
  assert.equal(response.status, 402);
  return JSON.parse(Buffer.from(response.headers.get('PAYMENT-REQUIRED')!, 'base64').toString('utf8')).accepts;
}

/** One paid call: the buyer charged once on-chain, exactly the receipt's amount, and one generation. */
async function paysOnce(tool: Tool, call: () => Promise<CallToolResult>, buyer: PrivateKeyAccount): Promise<CallToolResult> {
  const [buyerBefore, payToBefore, generated] = [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo()), await generations(tool.capability)];
  const result = await call();
  assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 500));
  const receipt = receiptOf(result);
  assert.equal(receipt.success, true);
  assert.equal(receipt.payer.toLowerCase(), buyer.address.toLowerCase());
  const charged = BigInt(receipt.amount);
  assert.ok(charged > 0n);
  assert.equal((result.structuredContent as any).charged.amount, receipt.amount);
  assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - charged);
  assert.equal(await balanceOf(service, 'base', payTo()), payToBefore + charged);
  assert.equal((await generations(tool.capability)) - generated, 1);
  return result;
}

describe('a client that advertises org.x402/payment: the extension binding', () => {
  test('server/discover declares the extension; an unpaid call is a payment_required result holding the HTTP 402\'s requirements', async () => {
    const wire = recording();
    const mcp = await connect({ extension: true, fetch: wire.fetch });
    assert.deepEqual(mcp.getServerCapabilities()?.extensions?.['org.x402/payment'], {});
    for (const tool of [CHAT, IMAGE]) {
      const refused = await mcp.callTool({ name: tool.name, arguments: { ...tool.input, network: 'base' } }).catch((error: unknown) => error);
      // not a result type the SDK knows: the client's own paying layer (paidMcpFetch below) reads it
      assert.ok(refused instanceof SdkError && refused.code === 'UNSUPPORTED_RESULT_TYPE', String(refused));
      const { result } = wire.answers.at(-1)!;
      assert.equal(result.resultType, 'payment_required');
      const required = result.paymentRequired as PaymentRequired;
      assert.equal(required.x402Version, 2);
      assert.equal(required.resource.url, `mcp://tool/${tool.name}`);
      assert.deepEqual(required.accepts, await httpAccepts(tool.path, tool.input));
      assert.equal(result.isError, undefined, 'not an error-shaped result');
    }
    await mcp.close();
  });

  for (const tool of [CHAT, IMAGE]) {
    test(`${tool.name}: paid through the extension binding, charged once on-chain; the result is complete, its receipt in _meta`, async () => {
      const buyer = await fundedEvmBuyer(service, ['base']);
      const wire = recording();
      const mcp = await connect({ extension: true, fetch: paidMcpFetch({ payer: exactPayer(buyer), maxPrice: 1_000_000n, network: 'base', fetch: wire.fetch }) });
      const result = await paysOnce(tool, () => mcp.callTool({ name: tool.name, arguments: { ...tool.input, network: 'base' } }) as Promise<CallToolResult>, buyer);
      const [unpaid, paid] = wire.answers.slice(-2);
      assert.equal(unpaid!.result.resultType, 'payment_required');
      assert.equal(paid!.result.resultType, 'complete');
      assert.equal(receiptOf(result).transaction, paid!.result._meta['x402/payment-response'].transaction);
      await mcp.close();
    });
  }
});

describe('a 2026-07-28 client that does not advertise the extension: the tool-result binding', () => {
  for (const tool of [CHAT, IMAGE]) {
    test(`${tool.name}: the PaymentRequired in an error result (resultType complete), paid, charged once on-chain`, async () => {
      const buyer = await fundedEvmBuyer(service, ['base']);
      const wire = recording();
      const mcp = await connect({ extension: false, fetch: paidMcpFetch({ payer: exactPayer(buyer), maxPrice: 1_000_000n, network: 'base', fetch: wire.fetch }) });
      await paysOnce(tool, () => mcp.callTool({ name: tool.name, arguments: { ...tool.input, network: 'base' } }) as Promise<CallToolResult>, buyer);
      const [unpaid, paid] = wire.answers.slice(-2);
      assert.equal(unpaid!.result.resultType, 'complete');
      assert.equal(unpaid!.result.isError, true);
      assert.deepEqual(unpaid!.result.structuredContent.accepts, await httpAccepts(tool.path, tool.input));
      assert.deepEqual(JSON.parse(unpaid!.result.content[0].text), unpaid!.result.structuredContent);
      assert.equal(paid!.result.resultType, 'complete');
      await mcp.close();
    });
  }

  test('a tool with an outputSchema still delivers its PaymentRequired, and its paid result matches the schema', async () => {
    const mcp = await connect({ extension: false });
    const { tools } = await mcp.listTools();
    assert.ok(tools.find((tool) => tool.name === 'chat')?.outputSchema, 'chat declares its output');
    // the SDK holds results to the outputSchema it listed: an unpaid call still gets its requirements
    const unpaid = (await mcp.callTool({ name: 'chat', arguments: { ...CHAT.input, network: 'base' } })) as CallToolResult;
    assert.equal(unpaid.isError, true);
    assert.equal((unpaid.structuredContent as PaymentRequired).x402Version, 2);
    await mcp.close();
  });
});

describe('payment channels over MCP', () => {
  test('a batch-settlement client pays three calls with one deposit, then vouchers alone', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
    const mcp = await channelAgent(buyer);
    const before = await balanceOf(service, 'base', buyer.address);

    const receipts = [];
    let afterDeposit = 0n;
    for (const tool of [CHAT, IMAGE, CHAT]) {
      const result = (await mcp.callTool({ name: tool.name, arguments: { ...tool.input, prompt: `${tool.input.prompt} ${receipts.length}`, network: 'base' } })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 500));
      receipts.push(receiptOf(result));
      if (receipts.length === 1) afterDeposit = await chain().getBlockNumber();
    }
    const [deposit, ...vouchers] = receipts;
    assert.match(deposit!.transaction, /^0x[0-9a-f]{64}$/, 'the first call carries the deposit');
    assert.equal((await chain().getTransactionReceipt({ hash: deposit!.transaction as Hex })).status, 'success');
    assert.equal(deposit!.amount, '3000000');
    for (const voucher of vouchers) assert.equal(voucher!.transaction, '', 'a voucher sends no transaction');
    assert.equal(await chain().getBlockNumber(), afterDeposit, 'no transaction after the deposit');
    assert.equal(await balanceOf(service, 'base', buyer.address), before - 3_000_000n, 'the deposit alone left the payer');
    const charges = receipts.map((receipt) => BigInt(receipt!.extra.chargedAmount));
    assert.ok(charges.every((charge) => charge > 0n));
    assert.equal(receipts.at(-1)!.extra.channelState.chargedCumulativeAmount, charges.reduce((a, b) => a + b).toString());
    await mcp.close();
  });

  for (const extension of [true, false]) {
    test(`a client that lost its channel's state is resynchronised by the corrective answer and pays on (${extension ? 'extension' : 'tool-result'} binding)`, async () => {
      const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
      const first = await channelAgent(buyer, extension);
      for (const tool of [CHAT, IMAGE]) assert.notEqual(((await first.callTool({ name: tool.name, arguments: { ...tool.input, network: 'base' } })) as CallToolResult).isError, true);
      await first.close();
      // a new client of the same payer: it knows of the channel from the escrow alone, signs too low a voucher, and
      // gets the requirements again with the server's state of the channel, which it checks and pays on from
      const fresh = await channelAgent(buyer, extension);
      const startBlock = await chain().getBlockNumber();
      const result = (await fresh.callTool({ name: IMAGE.name, arguments: { ...IMAGE.input, network: 'base' } })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 500));
      assert.equal(receiptOf(result).transaction, '', 'a voucher');
      assert.equal(await chain().getBlockNumber(), startBlock, 'no second deposit');
      await fresh.close();
    });
  }
});

describe('a paid image is an MCP resource of its payer', () => {
  test('read back by its payer (signed in), refused to another wallet and to a caller who does not sign in', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const mcp = await connect({ extension: true, fetch: paidMcpFetch({ payer: exactPayer(buyer), maxPrice: 1_000_000n, network: 'base' }) });
    const result = (await mcp.callTool({ name: IMAGE.name, arguments: { ...IMAGE.input, network: 'base' } })) as CallToolResult;
    const image = result.content.find((block) => block.type === 'image') as { data: string; mimeType: string };
    const link = result.content.find((block) => block.type === 'resource_link') as { uri: string; mimeType: string };
    const hosted = (result.structuredContent as any).result.images[0] as string;
    assert.ok(hosted.startsWith(`${service.url}/media/`), hosted);
    assert.equal(link.uri, `x402-ai://payments/${receiptOf(result).transaction}/media/${hosted.split('/').at(-1)}`);

    const { resourceTemplates } = await mcp.listResourceTemplates();
    assert.ok(resourceTemplates.some((template) => template.uriTemplate === 'x402-ai://payments/{payment}/media/{media}'));
    // each reader its own client: a client keeps what it read (the read is cacheScope private, the reader's own)
    const read = async (signIn?: string) => {
      const reader = await connect({ extension: true });
      try {
        return await reader.readResource({ uri: link.uri, ...(signIn ? { _meta: { 'x402/sign-in-with-x': signIn } } : {}) });
      } finally {
        await reader.close();
      }
    };
    const signIn = await mcpSignIn(buyer, `${service.url}/mcp`, 'base');
    assert.deepEqual((await read(signIn)).contents, [{ uri: link.uri, mimeType: 'image/png', blob: image.data }]);

    const stranger = await fundedEvmBuyer(service, ['base'], 1n);
    await assert.rejects(read(await mcpSignIn(stranger, `${service.url}/mcp`, 'base')), /did not pay for/);
    await assert.rejects(read(), /sign in with _meta\["x402\/sign-in-with-x"\]/);
    await assert.rejects(read(signIn), /nonce was already used/, 'a sign-in is good for one read');
    await mcp.close();
  });

  test('an image paid on a payment channel is read back through that channel by its payer, never through another payer\'s channel', async () => {
    const owner = await fundedEvmBuyer(service, ['base'], 20_000_000n);
    const ownerAgent = await channelAgent(owner);
    const result = (await ownerAgent.callTool({ name: IMAGE.name, arguments: { ...IMAGE.input, network: 'base' } })) as CallToolResult;
    await ownerAgent.close();
    const image = result.content.find((block) => block.type === 'image') as { data: string };
    const link = result.content.find((block) => block.type === 'resource_link') as { uri: string; name: string };
    const ownChannel = receiptOf(result).extra.channelState.channelId as string;
    assert.equal(link.uri, `x402-ai://payments/${ownChannel}/media/${link.name}`);

    // another payer opens a channel of its own, then names it with the owner's file
    const other = await fundedEvmBuyer(service, ['base'], 20_000_000n);
    const otherAgent = await channelAgent(other);
    const otherChannel = receiptOf((await otherAgent.callTool({ name: CHAT.name, arguments: { ...CHAT.input, network: 'base' } })) as CallToolResult).extra.channelState.channelId as string;
    await otherAgent.close();
    assert.notEqual(otherChannel, ownChannel);

    const read = async (uri: string, buyer: PrivateKeyAccount) => {
      const reader = await connect({ extension: true });
      try {
        return await reader.readResource({ uri, _meta: { 'x402/sign-in-with-x': await mcpSignIn(buyer, `${service.url}/mcp`, 'base') } });
      } finally {
        await reader.close();
      }
    };
    assert.deepEqual((await read(link.uri, owner)).contents, [{ uri: link.uri, mimeType: 'image/png', blob: image.data }]);
    await assert.rejects(read(`x402-ai://payments/${otherChannel}/media/${link.name}`, other), /no such paid file/);
    await assert.rejects(read(link.uri, other), /did not pay for/);
  });

  test('the price list and the model catalog are resources, listed with caching hints', async () => {
    const wire = recording();
    const mcp = await connect({ extension: false, fetch: wire.fetch });
    const { resources } = await mcp.listResources();
    assert.deepEqual(resources.map((resource) => resource.uri), ['x402-ai://prices', 'x402-ai://models']);
    assert.equal(wire.answers.at(-1)!.result.cacheScope, 'public');
    assert.ok(wire.answers.at(-1)!.result.ttlMs > 0);
    const prices = JSON.parse(((await mcp.readResource({ uri: 'x402-ai://prices' })).contents[0] as { text: string }).text);
    assert.deepEqual(prices.tools.map((tool: { tool: string }) => tool.tool), ['chat', 'generate_image', 'text_to_speech']);
    const models = JSON.parse(((await mcp.readResource({ uri: 'x402-ai://models' })).contents[0] as { text: string }).text);
    assert.ok(models.models.some((model: { id: string }) => model.id === 'local/demo-bigram'));
    const { prompts } = await mcp.listPrompts();
    assert.deepEqual(prompts, []);
    assert.equal(wire.answers.at(-1)!.result.cacheScope, 'public', 'an empty list has its caching hints too');
    await mcp.close();
  });
});
