// The MCP surface from outside, as a paying agent meets it on the 2025-11-25 wire (test/mcp-2026.test.ts: the
// 2026-07-28 wire): the MCP SDK v1 client over Streamable HTTP lists the
// tools, reads each tool's payment requirements from its error result, and pays with the official x402 client
// (@x402/core's x402Client with the exact schemes of @x402/evm and @x402/svm) on the sandbox chains. The money
// rules are the HTTP ones: one proof pays once whichever surface carries it, a refused proof moves nothing, a
// failed model charges nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { toClientEvmSigner } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { createPublicClient, http } from 'viem';
import { validateDiscoveryExtension } from '@x402/extensions/bazaar';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, fundedSolanaBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import { unusedPort } from './support/ports.ts';
import { embeddedModels } from '../src/config/embedded-models.ts';
import { NETWORKS, type NetworkName } from '../src/x402/networks.ts';
import type { RunningService } from '../src/service.ts';

const CHAT_INPUT = { model: 'local/demo-bigram', prompt: 'Hello there', max_tokens: 8 };
const IMAGE_INPUT = { prompt: 'a red fox', n: 1, size: '256x256' };
const SPEECH_INPUT = { text: 'Hello world' };
const TOOLS = [
  { name: 'chat', path: '/api/v1/ai/chat', input: CHAT_INPUT, capability: 'chat' },
  { name: 'generate_image', path: '/api/v1/ai/images', input: IMAGE_INPUT, capability: 'image' },
  { name: 'text_to_speech', path: '/api/v1/ai/tts', input: SPEECH_INPUT, capability: 'speech' },
] as const;
const NETWORK_LIST: NetworkName[] = ['base', 'solana'];

let service: RunningService;
let mcp: Client;

before(async () => {
  service = await startTestService({
    networks: NETWORK_LIST,
    config: {
      // a chat model whose provider is down: its calls fail, and must charge nothing
      providers: { down: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${await unusedPort()}/v1`, timeoutMs: 2000, maxRetries: 0 } },
      models: [
        ...embeddedModels(),
        {
          id: 'down/chat',
          provider: 'down',
          upstreamModel: 'gone-1',
          capability: 'chat',
          maxTokens: 256,
          defaultMaxTokens: 64,
          price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
        },
      ],
    },
  });
  mcp = await connect();
});
after(async () => {
  await mcp?.close();
  await service?.stop();
});

/** The MCP SDK v1 client: the 2025-11-25 wire (initialize, then one POST per message). */
async function connect(): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`));
  await client.connect(transport);
  assert.equal(transport.protocolVersion, '2025-11-25');
  return client;
}

const call = (name: string, args: Record<string, unknown>, payment?: PaymentPayload) =>
  mcp.callTool({ name, arguments: args, ...(payment ? { _meta: { 'x402/payment': payment } } : {}) }) as Promise<CallToolResult>;

/** The PaymentRequired of an unpaid (or refused) call, as a paying MCP client reads it: structuredContent first. */
function requiredOf(result: CallToolResult): PaymentRequired {
  assert.equal(result.isError, true);
  const parsed = PaymentRequiredV2Schema.safeParse(result.structuredContent);
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues ?? result));
  return result.structuredContent as unknown as PaymentRequired;
}

async function quote(name: string, args: Record<string, unknown>): Promise<PaymentRequired> {
  return requiredOf(await call(name, args));
}

function receiptOf(result: CallToolResult) {
  const receipt = result._meta?.['x402/payment-response'] as Record<string, unknown> | undefined;
  assert.ok(receipt && typeof receipt.success === 'boolean' && typeof receipt.transaction === 'string' && typeof receipt.network === 'string', JSON.stringify(result).slice(0, 500));
  return receipt as unknown as { success: boolean; transaction: string; network: string; payer: string; amount: string };
}

const rpcUrl = (network: NetworkName) => service.sandbox!.chains.get(network)!.rpcUrl;

/** An official x402 client for a fresh funded buyer on `network`, and the buyer's address. */
async function payer(network: NetworkName): Promise<{ client: x402Client; address: string }> {
  if (NETWORKS[network].family === 'evm') {
    const buyer = await fundedEvmBuyer(service, [network]);
    return { client: registerExactEvmScheme(new x402Client(), { signer: buyer }), address: buyer.address };
  }
  const buyer = await fundedSolanaBuyer(service, [network], 5_000_000n);
  const client = new x402Client().register(NETWORKS[network].caip2 as `${string}:${string}`, new ExactSvmScheme(buyer, { rpcUrl: rpcUrl(network) }));
  return { client, address: buyer.address };
}

/** A signed payment for one tool call on `network`, made from the requirements the tool itself returned. */
async function paymentFor(name: string, args: Record<string, unknown>, network: NetworkName) {
  const { client, address } = await payer(network);
  const required = await quote(name, { ...args, network });
  const payment = await client.createPaymentPayload(required);
  return { payment, address, price: BigInt(payment.accepted.amount) };
}

/** successful generations so far, from /metrics */
async function generations(capability: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('generations_total{') && l.includes(`capability="${capability}"`) && l.includes('outcome="success"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}


describe('discovering the tools', () => {
  test('the MCP SDK client lists the paid tools, with the HTTP bodies as input schemas, and the free models tool', async () => {
    const { tools } = await mcp.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['chat', 'generate_image', 'text_to_speech', 'list_models']);
    const chat = tools.find((t) => t.name === 'chat')!;
    const properties = chat.inputSchema.properties as Record<string, any>;
    assert.ok(properties.prompt && properties.messages && properties.max_tokens, 'the chat body fields');
    assert.equal(properties.stream, undefined, 'a tool result is one message: no server-sent events');
    assert.ok(properties.network.enum.includes('base') && properties.network.enum.includes(NETWORKS.solana.caip2));
    const instructions = mcp.getInstructions() ?? '';
    assert.match(instructions, /x402\/payment/);
    assert.match(instructions, /x402\/payment-response/);
  });

  test('list_models is free and states every model with its price', async () => {
    const result = await call('list_models', {});
    assert.equal(result.isError, undefined);
    const listing = result.structuredContent as { models: { id: string; price: unknown; priceUsdc: unknown }[] };
    assert.ok(listing.models.some((m) => m.id === 'local/demo-bigram' && m.price && m.priceUsdc));
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), listing);
  });

  test('/mcp/server.json is an MCP registry entry naming this /mcp; /.well-known/x402 and /llms.txt point to it', async () => {
    const server = (await (await fetch(`${service.url}/mcp/server.json`)).json()) as any;
    assert.equal(server.$schema, 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
    assert.match(server.name, /^[a-z0-9.-]+\/[a-z0-9-]+$/);
    assert.ok(server.description.length <= 100);
    assert.deepEqual(server.remotes, [{ type: 'streamable-http', url: `${service.url}/mcp` }]);
    const wellKnown = (await (await fetch(`${service.url}/.well-known/x402`)).json()) as any;
    assert.equal(wellKnown.mcp.url, `${service.url}/mcp`);
    assert.deepEqual(wellKnown.mcp.tools.map((t: any) => t.resource), TOOLS.map((t) => `mcp://tool/${t.name}`));
    const llms = await (await fetch(`${service.url}/llms.txt`)).text();
    assert.ok(llms.includes(`${service.url}/mcp`));
  });
});

describe('an unpaid call returns the payment requirements', () => {
  for (const tool of TOOLS) {
    test(`${tool.name}: the requirements of the HTTP 402 for the same body, in the x402 MCP transport's form`, async () => {
      for (const network of [undefined, ...NETWORK_LIST]) {
        const result = await call(tool.name, network ? { ...tool.input, network } : tool.input);
        const required = requiredOf(result);
        assert.equal(required.resource.url, `mcp://tool/${tool.name}`);
        // content[0].text: the same PaymentRequired, for clients that read no structuredContent
        assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), required);
        const http = await postJson(`${service.url}${tool.path}`, tool.input, network ? { 'X-Network': network } : {});
        assert.equal(http.status, 402);
        assert.deepEqual(required.accepts, decode(http.headers.get('PAYMENT-REQUIRED')).accepts, `network ${network}`);
        // the bazaar extension in its MCP form
        const bazaar = required.extensions?.bazaar as any;
        assert.equal(bazaar.info.input.type, 'mcp');
        assert.equal(bazaar.info.input.toolName, tool.name);
        assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true });
      }
    });
  }

  test('the price is the server\'s own for the input: a longer answer costs more', async () => {
    const small = await quote('chat', { ...CHAT_INPUT, network: 'base' });
    const large = await quote('chat', { ...CHAT_INPUT, max_tokens: 200, network: 'base' });
    assert.ok(BigInt(large.accepts[0]!.amount) > BigInt(small.accepts[0]!.amount));
  });

  test('a network the gateway does not take: every network is offered, and the reason names it', async () => {
    const required = await quote('chat', { ...CHAT_INPUT, network: 'mars' });
    assert.match(required.error ?? '', /"mars" is not a supported network argument/);
    assert.deepEqual(required.accepts.filter((a) => a.scheme === 'exact').map((a) => a.network), NETWORK_LIST.map((n) => NETWORKS[n].caip2));
  });

  test('a payment in the wrong shape or version is refused with the requirements and the reason', async () => {
    const accepted = (await quote('chat', { ...CHAT_INPUT, network: 'base' })).accepts[0];
    const v1 = await call('chat', CHAT_INPUT, { x402Version: 1, accepted, payload: {} } as unknown as PaymentPayload);
    assert.match(requiredOf(v1).error ?? '', /^unsupported_x402_version: 1 \(_meta\["x402\/payment"\] carries x402Version 2\)$/);
    const junk = await call('chat', CHAT_INPUT, 'not a payload' as unknown as PaymentPayload);
    assert.match(requiredOf(junk).error ?? '', /^invalid_payment: _meta\["x402\/payment"\] must hold/);
  });

  test('an invalid input is an error result naming the field, with no requirements', async () => {
    const result = await call('generate_image', { prompt: 'x', size: 'huge' });
    assert.equal(result.isError, true);
    assert.equal((result.structuredContent as any).error.code, 'invalid_request');
    assert.equal((result.structuredContent as any).error.field, 'size');
  });
});

describe('paying a tool call with the official x402 client', () => {
  const cases = [
    { tool: TOOLS[0], network: 'base' as NetworkName },
    { tool: TOOLS[1], network: 'solana' as NetworkName },
    { tool: TOOLS[2], network: 'base' as NetworkName },
    { tool: TOOLS[0], network: 'solana' as NetworkName },
  ];
  for (const { tool, network } of cases) {
    test(`${tool.name} on ${network}: one on-chain charge, equal to the receipt in _meta`, async () => {
      const { payment, address, price } = await paymentFor(tool.name, tool.input, network);
      const payTo = service.rails.get(network)!.payTo;
      const [buyerBefore, payToBefore, generated] = [await balanceOf(service, network, address), await balanceOf(service, network, payTo), await generations(tool.capability)];

      const result = await call(tool.name, { ...tool.input, network }, payment);
      assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 500));
      const receipt = receiptOf(result);
      assert.equal(receipt.success, true);
      assert.equal(receipt.network, NETWORKS[network].caip2);
      assert.equal(receipt.payer.toLowerCase(), address.toLowerCase());
      assert.ok(receipt.transaction.length > 0);
      assert.equal(BigInt(receipt.amount), price);
      const structured = result.structuredContent as any;
      assert.equal(structured.charged.amount, price.toString());
      // read on-chain: the buyer paid exactly the receipt's amount, the seller received it
      assert.equal(await balanceOf(service, network, address), buyerBefore - price);
      assert.equal(await balanceOf(service, network, payTo), payToBefore + price);
      assert.equal((await generations(tool.capability)) - generated, 1);

      if (tool.name === 'chat') {
        assert.equal(result.content[0]!.type, 'text');
        assert.ok((result.content[0] as { text: string }).text.length > 0);
        assert.ok(structured.usage.totalTokens > 0);
      }
      if (tool.name === 'generate_image') {
        const image = result.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
        assert.equal(image.mimeType, 'image/png');
        assert.deepEqual([...Buffer.from(image.data, 'base64').subarray(1, 4)], [...Buffer.from('PNG')]);
        // the link names the MCP resource its payer reads it back with (test/mcp-2026.test.ts reads it)
        const link = result.content.find((c) => c.type === 'resource_link') as { uri: string; name: string };
        assert.equal(link.uri, `x402-ai://payments/${receipt.transaction}/media/${link.name}`);
        const hosted = await fetch(structured.result.images[0]);
        assert.deepEqual(Buffer.from(await hosted.arrayBuffer()), Buffer.from(image.data, 'base64'));
      }
      if (tool.name === 'text_to_speech') {
        const audio = result.content.find((c) => c.type === 'audio') as { data: string; mimeType: string };
        assert.match(audio.mimeType, /^audio\//);
        const link = result.content.find((c) => c.type === 'resource_link') as { uri: string; name: string };
        assert.equal(link.uri, `x402-ai://payments/${receipt.transaction}/media/${link.name}`);
        assert.deepEqual(Buffer.from(await (await fetch(structured.result.audioUrl)).arrayBuffer()), Buffer.from(audio.data, 'base64'));
      }
    });
  }
});

describe('every scheme the requirements offer can pay', () => {
  test('chat on base under upto (offered beside exact when the network is named): charged the metered cost, at most the ceiling', async () => {
    const buyer = await fundedEvmBuyer(service, ['base']);
    const rpc = rpcUrl('base');
    const client = new x402Client().register('eip155:8453', new UptoEvmScheme(toClientEvmSigner(buyer, createPublicClient({ transport: http(rpc) })), { rpcUrl: rpc }));
    const required = await quote('chat', { ...CHAT_INPUT, network: 'base' });
    const upto = required.accepts.find((accept) => accept.scheme === 'upto');
    assert.ok(upto, 'upto is offered for chat on base');
    const payment = await client.createPaymentPayload({ ...required, accepts: [upto] });
    const payTo = service.rails.get('base')!.payTo;
    const [buyerBefore, payToBefore] = [await balanceOf(service, 'base', buyer.address), await balanceOf(service, 'base', payTo)];

    const result = await call('chat', { ...CHAT_INPUT, network: 'base' }, payment);
    const receipt = receiptOf(result);
    assert.equal(receipt.success, true);
    const charged = BigInt(receipt.amount);
    assert.ok(charged > 0n && charged <= BigInt(upto.amount), `charged ${charged} of the ceiling ${upto.amount}`);
    assert.equal((result.structuredContent as any).charged.amount, receipt.amount);
    assert.equal(await balanceOf(service, 'base', buyer.address), buyerBefore - charged);
    assert.equal(await balanceOf(service, 'base', payTo), payToBefore + charged);
  });
});

describe('payment channels over MCP', () => {
  test('a voucher that disagrees with the server gets the channel\'s state for its payer, as over HTTP (the official client resynchronises from it)', async () => {
    const buyer = await fundedEvmBuyer(service, ['base'], 10_000_000n);
    const chain = createPublicClient({ transport: http(rpcUrl('base')) });
    // a client that keeps its channel state, and one with none (a restarted agent): both sign for the same channel
    const channelClient = () => new x402Client().register('eip155:8453', new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain), { depositStrategy: () => '1000000' }));
    const args = { ...IMAGE_INPUT, network: 'base' };
    const first = await channelClient().createPaymentPayload(await quote('generate_image', args));
    assert.equal(first.accepted.scheme, 'batch-settlement');
    const paid = await call('generate_image', args, first);
    assert.equal(receiptOf(paid).success, true);
    const price = BigInt(first.accepted.amount);

    // (for another image: the same one would get the first call's kept result, its voucher being the same)
    const another = { ...args, prompt: `${args.prompt}, at night` };
    const stale = await channelClient().createPaymentPayload(await quote('generate_image', another));
    const corrective = requiredOf(await call('generate_image', another, stale));
    assert.match(corrective.error ?? '', /cumulative/);
    const offer = corrective.accepts.find((accept) => accept.scheme === 'batch-settlement')!;
    const state = (offer.extra as { channelState?: Record<string, string> }).channelState;
    assert.ok(state, 'the corrective offer carries the channel state');
    assert.equal(BigInt(state.chargedCumulativeAmount!), price, 'what the first call was charged');
  });
});

describe('one proof, one payment, one generation', () => {
  test('the same proof on /mcp, then on the HTTP route: the HTTP call is refused, one charge', async () => {
    const { payment, address, price } = await paymentFor('chat', CHAT_INPUT, 'base');
    const generated = await generations('chat');
    const first = await call('chat', { ...CHAT_INPUT, network: 'base' }, payment);
    assert.equal(receiptOf(first).success, true);
    const proof = Buffer.from(JSON.stringify(payment)).toString('base64');
    const http = await postJson(`${service.url}/api/v1/ai/chat`, CHAT_INPUT, { 'PAYMENT-SIGNATURE': proof });
    assert.equal(http.status, 402);
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n - price);
    assert.equal((await generations('chat')) - generated, 1);
  });

  test('the same proof on the HTTP route, then on /mcp: the tool call is refused, one charge', async () => {
    const { payment, address, price } = await paymentFor('chat', CHAT_INPUT, 'base');
    const generated = await generations('chat');
    const proof = Buffer.from(JSON.stringify(payment)).toString('base64');
    const http = await postJson(`${service.url}/api/v1/ai/chat`, CHAT_INPUT, { 'PAYMENT-SIGNATURE': proof });
    assert.equal(http.status, 200);
    const again = await call('chat', { ...CHAT_INPUT, network: 'base' }, payment);
    assert.equal(requiredOf(again).accepts.length > 0, true);
    assert.equal(again.content.length, 1, 'no tool content, only the PaymentRequired as text');
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n - price);
    assert.equal((await generations('chat')) - generated, 1);
  });

  test('the same proof twice on /mcp at once: one generation, one charge; a retry gets the same result', async () => {
    const { payment, address, price } = await paymentFor('generate_image', IMAGE_INPUT, 'base');
    const generated = await generations('image');
    const args = { ...IMAGE_INPUT, network: 'base' };
    const second = await connect();
    const results = (await Promise.all([
      call('generate_image', args, payment),
      second.callTool({ name: 'generate_image', arguments: args, _meta: { 'x402/payment': payment } }),
    ])) as CallToolResult[];
    await second.close();
    const paid = results.filter((r) => r.isError !== true);
    assert.ok(paid.length >= 1);
    for (const refused of results.filter((r) => r.isError === true)) assert.equal((refused.structuredContent as any).error.code, 'payment_in_progress');
    const retry = await call('generate_image', args, payment);
    assert.equal(receiptOf(retry).transaction, receiptOf(paid[0]!).transaction);
    assert.deepEqual(retry.structuredContent, paid[0]!.structuredContent);
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n - price);
    assert.equal((await generations('image')) - generated, 1);
  });

  test('a proof for one input does not pay another: refused, nothing moves', async () => {
    const { payment, address } = await paymentFor('chat', CHAT_INPUT, 'base');
    const other = await call('chat', { ...CHAT_INPUT, prompt: 'Something else entirely', network: 'base' }, payment);
    assert.equal(requiredOf(other).accepts.length > 0, true);
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n);
  });
});

describe('refused proofs and failed work move nothing', () => {
  test('a tampered proof (its recipient changed after signing) is refused', async () => {
    const { payment, address } = await paymentFor('chat', CHAT_INPUT, 'base');
    const authorization = (payment.payload as any).authorization;
    const tampered = { ...payment, payload: { ...payment.payload, authorization: { ...authorization, to: address } } };
    const result = await call('chat', { ...CHAT_INPUT, network: 'base' }, tampered as PaymentPayload);
    const required = requiredOf(result);
    assert.ok(required.error && required.error.length > 0);
    assert.equal(result._meta?.['x402/payment-response'], undefined);
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n);
  });

  test('an underpaying proof (signed for less than the price) is refused', async () => {
    const { client, address } = await payer('base');
    const required = await quote('chat', { ...CHAT_INPUT, network: 'base' });
    const cheap = { ...required, accepts: required.accepts.map((a) => ({ ...a, amount: '1' })) };
    const payment = await client.createPaymentPayload(cheap);
    const result = await call('chat', { ...CHAT_INPUT, network: 'base' }, payment);
    assert.match(requiredOf(result).error ?? '', /amount/);
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n);
  });

  test('a Solana proof whose transaction was altered is refused', async () => {
    const { payment, address } = await paymentFor('text_to_speech', SPEECH_INPUT, 'solana');
    const transaction = Buffer.from((payment.payload as { transaction: string }).transaction, 'base64');
    transaction[transaction.length - 1]! ^= 1;
    const altered = { ...payment, payload: { transaction: transaction.toString('base64') } };
    const result = await call('text_to_speech', { ...SPEECH_INPUT, network: 'solana' }, altered);
    requiredOf(result);
    assert.equal(await balanceOf(service, 'solana', address), 5_000_000n);
  });

  test('a failing model charges nothing, and the error says so', async () => {
    const input = { model: 'down/chat', prompt: 'Hello', max_tokens: 8 };
    const { payment, address } = await paymentFor('chat', input, 'base');
    const result = await call('chat', { ...input, network: 'base' }, payment);
    assert.equal(result.isError, true);
    const error = (result.structuredContent as any).error;
    assert.ok(error.status >= 500 && error.status < 600);
    assert.match(error.message, /nothing was charged/);
    assert.equal(result._meta?.['x402/payment-response'], undefined);
    assert.equal(await balanceOf(service, 'base', address), 10_000_000n);
  });
});

describe('the transport', () => {
  test('stateless: no session id; GET and DELETE are 405 in JSON-RPC form', async () => {
    const init = await postJson(
      `${service.url}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { Accept: 'application/json, text/event-stream' },
    );
    assert.equal(init.status, 200);
    assert.equal(init.headers.get('mcp-session-id'), null);
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${service.url}/mcp`, { method, headers: { Accept: 'text/event-stream' } });
      assert.equal(response.status, 405);
      const body = (await response.json()) as any;
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(typeof body.error.code, 'number');
    }
  });
});
