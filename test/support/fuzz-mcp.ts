// Generated hostile requests to /mcp for test/fuzz.test.ts: malformed JSON and JSON-RPC, wrong and unknown methods,
// huge and deep params, tool calls with wrong inputs, and `_meta["x402/payment"]` in every wrong shape, including
// genuinely signed proofs tampered with after signing and a settled proof replayed for another input. Each is
// drawn from a seeded Prng. Every answer must be JSON-RPC (an error object, or a result), below 500, and a
// tampered proof never gets a served tool result.
import type { PrivateKeyAccount } from 'viem/accounts';
import type { Prng } from './prng.ts';
import type { FuzzRequest } from './fuzz-requests.ts';
import { signEvmProof } from './evm-proof.ts';
import type { Quote } from './fuzz-proofs.ts';

export const MCP_PATH = '/mcp';
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' };

export interface McpMaterial {
  buyer: PrivateKeyAccount;
  chainId: number;
  /** HTTP quotes of the chat route (the tool `chat` is offered the same requirements for the same body) */
  quote: Quote;
  /** a tool call that was paid during setup: its arguments and the PaymentPayload that paid them */
  settled: { args: Record<string, unknown>; payment: Record<string, unknown> };
  /** a text every prompt holds, which must reach no log line */
  canary: string;
}

const rpc = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const toolCall = (name: string, args: unknown, meta?: unknown) => rpc('tools/call', { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) });

/** A v2 PaymentPayload for the chat quote, signed by the buyer, with what `tamper` changes. */
async function signedPayment(material: McpMaterial, overrides: Parameters<typeof signEvmProof>[3] = {}): Promise<Record<string, unknown>> {
  const v1 = JSON.parse(Buffer.from(await signEvmProof(material.buyer, material.quote.v1, material.chainId, overrides), 'base64').toString('utf8')) as {
    payload: Record<string, unknown>;
  };
  return { x402Version: 2, resource: { url: 'mcp://tool/chat', description: 'chat', mimeType: 'application/json' }, accepted: material.quote.v2, payload: v1.payload };
}

/** JSON text of an object nested `depth` levels (JSON.stringify itself would run out of stack). */
const deep = (depth: number) => `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;

function request(label: string, body: unknown, headers: Record<string, string> = HEADERS, extra: Partial<FuzzRequest> = {}): FuzzRequest {
  return { label: `mcp: ${label}`, surface: 'mcp', method: 'POST', path: MCP_PATH, headers, body: typeof body === 'string' ? body : JSON.stringify(body), ...extra };
}

export async function fuzzMcpRequest(prng: Prng, material: McpMaterial): Promise<FuzzRequest> {
  // the quoted body (its messages hold the canary): a proof signed for the quote is for exactly this input's price
  const args = { ...(material.quote.route.body as Record<string, unknown>) };
  const kind = prng.int(0, 11);
  switch (kind) {
    case 0: {
      const text = prng.pick(['', '{', '[', 'null', '"x"', '{"jsonrpc":"2.0",', prng.string(prng.int(1, 200), '{}[]":,0123abc\\ '), '{"jsonrpc":"2.0","id":1,"method":"tools/list"}garbage', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"__proto__":{"x":1}}}}']);
      return request('malformed JSON', text);
    }
    case 1: {
      const envelope = prng.pick<unknown>([
        {},
        [],
        [rpc('tools/list'), rpc('tools/list', undefined, 2)],
        { jsonrpc: '1.0', id: 1, method: 'tools/list' },
        { id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: { nested: true }, method: 'tools/list' },
        { jsonrpc: '2.0', id: 1, method: 42 },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [1, 2, 3] },
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: null, error: { code: 1, message: 'x' } },
        rpc('notifications/initialized', undefined, undefined),
        Array.from({ length: prng.int(2, 30) }, (_, i) => rpc(prng.pick(['tools/list', 'ping', 'nope']), undefined, i)),
      ]);
      return request('malformed JSON-RPC', envelope);
    }
    case 2: {
      const method = prng.pick(['tools/cal', 'resources/read', 'resources/list', 'prompts/get', 'sampling/createMessage', 'completion/complete', 'logging/setLevel', '', prng.string(prng.int(1, 40), 'abc/_-')]);
      return request(`method ${JSON.stringify(method).slice(0, 30)}`, rpc(method, prng.chance(0.5) ? { name: 'chat' } : undefined));
    }
    case 3: {
      const name = prng.pick(['nope', '', 'CHAT', 'chat ', '../chat', prng.string(prng.int(1, 300), 'abcdef_')]);
      return request('unknown tool', toolCall(name, args));
    }
    case 4: {
      const wrong = prng.pick<unknown>([null, 'a string', 42, [], [args], { ...args, model: 7 }, { ...args, max_tokens: -1 }, { ...args, stream: true }, { ...args, network: 12 }, { ...args, network: 'mars' }, { prompt: '' }]);
      return request('wrong tool input', toolCall(prng.pick(['chat', 'generate_image', 'text_to_speech', 'list_models']), wrong));
    }
    case 5: {
      const size = prng.pick([150_000, 250_000, 300_000, 1_000_000]);
      const huge = prng.pick<unknown>([{ ...args, prompt: 'a'.repeat(size) }, { ...args, options: Object.fromEntries(Array.from({ length: size / 20 }, (_, i) => [`k${i}`, i])) }]);
      return request(`huge params (${size})`, toolCall('chat', huge));
    }
    case 6: {
      const [options, payment] = [deep(prng.int(100, 20_000)), prng.chance(0.5) ? deep(prng.int(100, 20_000)) : undefined];
      const call = JSON.stringify(toolCall('chat', { ...args, options: '<options>' }, payment === undefined ? undefined : { 'x402/payment': '<payment>' }));
      return request('deep params', call.replace('"<options>"', options).replace('"<payment>"', payment ?? 'null'), HEADERS, { tampered: payment !== undefined });
    }
    case 7: {
      const meta = prng.pick<unknown>([null, 'x', 7, [], { 'x402/payment': null }, { 'x402/payment': 'bm90IGEgcHJvb2Y=' }, { 'x402/payment': 123 }, { 'x402/payment': [] }, { 'x402/payment': {} }, { 'x402/payment': { x402Version: 2 } }, { 'x402/payment': { x402Version: 1, scheme: 'exact', network: 'base', payload: {} } }, { 'x402/payment': { x402Version: 2, accepted: { scheme: 'exact' }, payload: 'x' } }, { 'x402/payment': { x402Version: 2, accepted: material.quote.v2, payload: {} } }]);
      return request('wrong _meta shape', toolCall('chat', args, meta), HEADERS, { tampered: true });
    }
    case 8: {
      // a genuine signature over changed terms, or terms changed after signing: never served
      const payTo = material.quote.v2.payTo as `0x${string}`;
      const variants: (() => Promise<Record<string, unknown>>)[] = [
        async () => signedPayment(material, { value: BigInt(material.quote.v2.amount) - 1n }),
        async () => signedPayment(material, { to: material.buyer.address }),
        async () => signedPayment(material, { chainId: 1 }),
        async () => signedPayment(material, { validBefore: 1n }),
        async () => {
          const payment = await signedPayment(material);
          const payload = payment.payload as { signature: string; authorization: Record<string, string> };
          return { ...payment, payload: { ...payload, authorization: { ...payload.authorization, value: String(BigInt(payload.authorization.value!) + 1n) } } };
        },
        async () => {
          const payment = await signedPayment(material);
          const payload = payment.payload as { signature: string };
          const flipped = payload.signature.slice(0, 10) + (payload.signature[10] === 'a' ? 'b' : 'a') + payload.signature.slice(11);
          return { ...payment, payload: { ...payload, signature: flipped } };
        },
        async () => ({ ...(await signedPayment(material)), accepted: { ...material.quote.v2, amount: '1' } }),
        async () => ({ ...(await signedPayment(material)), accepted: { ...material.quote.v2, payTo: payTo.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } }),
      ];
      return request('tampered proof', toolCall('chat', args, { 'x402/payment': await prng.pick(variants)() }), HEADERS, { tampered: true });
    }
    case 9:
      // the settled proof for another input: the result of a payment goes only to the call it paid for
      return request('settled proof, other input', toolCall('chat', { ...material.settled.args, prompt: `${material.canary} other` }, { 'x402/payment': material.settled.payment }), HEADERS, { tampered: true });
    case 10: {
      const headers = prng.pick<Record<string, string>>([
        { 'Content-Type': 'application/json' },
        { ...HEADERS, Accept: 'text/html' },
        { ...HEADERS, 'Content-Type': 'text/plain' },
        { ...HEADERS, 'Mcp-Protocol-Version': prng.pick(['1999-01-01', 'x', '']) },
        { ...HEADERS, 'Mcp-Session-Id': prng.string(20, 'abcdef0123') },
      ]);
      return request('wrong headers', toolCall('chat', args), headers);
    }
    default: {
      const method = prng.pick(['GET', 'DELETE', 'PUT', 'PATCH']);
      return { label: `mcp: ${method}`, surface: 'mcp', method, path: MCP_PATH, headers: { Accept: 'text/event-stream, application/json' }, ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }) };
    }
  }
}

/** What is wrong with an answer from /mcp, or undefined: JSON-RPC in every case, and no served result for a tampered proof. */
export function judgeMcp(request: FuzzRequest, status: number, contentType: string, body: string): string | undefined {
  if (status === 202 && body === '') return undefined; // notifications and responses only
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `a ${status} from /mcp whose body is not JSON: ${body.slice(0, 200)}`;
  }
  if (!contentType.startsWith('application/json')) return `a ${status} from /mcp with Content-Type ${contentType}`;
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  for (const message of messages as Record<string, any>[]) {
    if (message?.jsonrpc !== '2.0') return `not JSON-RPC 2.0: ${body.slice(0, 200)}`;
    if (status >= 400 || message.error !== undefined) {
      if (!Number.isInteger(message.error?.code) || typeof message.error?.message !== 'string') return `not a JSON-RPC error: ${body.slice(0, 200)}`;
      continue;
    }
    if (typeof message.result !== 'object' || message.result === null) return `a JSON-RPC response with no result: ${body.slice(0, 200)}`;
    if (request.tampered && message.result.isError !== true) return `a tampered proof was served: ${body.slice(0, 300)}`;
    if (request.tampered && message.result._meta?.['x402/payment-response']?.success === true) return `a tampered proof was settled: ${body.slice(0, 300)}`;
  }
  return undefined;
}
