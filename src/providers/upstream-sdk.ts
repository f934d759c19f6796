// The AI SDK's OpenAI providers (@ai-sdk/openai and @ai-sdk/openai-compatible, ~4 MB resident) are imported
// only when the config names an upstream provider (ProviderRegistry.create): the embedded engines, all the
// sandbox defaults serve, never need them.
import type { createAnthropic } from '@ai-sdk/anthropic';
import type { createOpenAI } from '@ai-sdk/openai';
import type { createOpenAICompatible } from '@ai-sdk/openai-compatible';

export interface UpstreamSdk {
  createOpenAI: typeof createOpenAI;
  createOpenAICompatible: typeof createOpenAICompatible;
  /** present when a provider of type anthropic is configured */
  createAnthropic?: typeof createAnthropic | undefined;
}

/** Anthropic's provider (@ai-sdk/anthropic), imported only when a provider of type anthropic is configured. */
export async function loadAnthropicSdk(): Promise<typeof createAnthropic> {
  return (await import('@ai-sdk/anthropic')).createAnthropic;
}

export async function loadUpstreamSdk(): Promise<UpstreamSdk> {
  const [openai, compatible] = await Promise.all([import('@ai-sdk/openai'), import('@ai-sdk/openai-compatible')]);
  return { createOpenAI: openai.createOpenAI, createOpenAICompatible: compatible.createOpenAICompatible };
}
