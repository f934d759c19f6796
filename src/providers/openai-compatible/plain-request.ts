// The request body of a plain chat call, built directly: text turns only, no tools, no response format, no reasoning
// setting, no provider options. For such a call @ai-sdk/openai-compatible's prepareRequest (option schemas parsed,
// tools and formats prepared, every message converted) writes exactly this object; built here it costs a few
// microseconds instead of ~30 in the call (bench/upstream-overhead.ts). Every other call, and every call the rules
// below do not recognise, takes prepareRequest. plain-request.test.ts holds the two to the same bytes.
import type { LanguageModelV4CallOptions, LanguageModelV4Message } from '@ai-sdk/provider';

/** The body prepareRequest would build for `options`, when the call is plain; otherwise undefined. */
export function plainRequestBody(modelId: string, providerName: string, options: LanguageModelV4CallOptions): Record<string, unknown> | undefined {
  if (!isPlainCall(providerName, options)) return undefined;
  const messages: Record<string, unknown>[] = [];
  for (const message of options.prompt) {
    const turn = plainTurn(message);
    if (!turn) return undefined;
    messages.push(turn);
  }
  return {
    model: modelId,
    max_tokens: options.maxOutputTokens,
    temperature: options.temperature,
    top_p: options.topP,
    frequency_penalty: options.frequencyPenalty,
    presence_penalty: options.presencePenalty,
    stop: options.stopSequences,
    seed: options.seed,
    messages,
  };
}

function isPlainCall(providerName: string, options: LanguageModelV4CallOptions): boolean {
  if (options.tools?.length || options.toolChoice !== undefined || options.topK !== undefined) return false;
  if (options.responseFormat !== undefined && options.responseFormat.type !== 'text') return false;
  if (options.reasoning !== undefined && options.reasoning !== 'provider-default') return false;
  // a name the SDK also looks up camelCased (and warns about) is not plain
  if (/[_-]/.test(providerName)) return false;
  for (const [key, value] of Object.entries(options.providerOptions ?? {})) {
    if (key !== providerName || Object.keys(value ?? {}).length > 0) return false;
  }
  return true;
}

/** A text-only turn without provider options, as the SDK converts it; undefined for anything else. */
function plainTurn(message: LanguageModelV4Message): Record<string, unknown> | undefined {
  if (message.providerOptions !== undefined) return undefined;
  if (message.role === 'system') return { role: 'system', content: message.content };
  if (message.role !== 'user' && message.role !== 'assistant') return undefined;
  const texts: string[] = [];
  for (const part of message.content) {
    if (part.type !== 'text' || part.providerOptions !== undefined) return undefined;
    texts.push(part.text);
  }
  if (message.role === 'assistant') return { role: 'assistant', content: texts.join('') };
  return { role: 'user', content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text', text })) };
}
