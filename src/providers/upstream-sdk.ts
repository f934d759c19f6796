// The AI SDK's OpenAI providers (@ai-sdk/openai and @ai-sdk/openai-compatible, ~4 MB resident) are imported
// only when the config names an upstream provider (ProviderRegistry.create): the embedded engines, all the
// sandbox defaults serve, never need them.
import type { createAnthropic } from '@ai-sdk/anthropic';
import type { createOpenAI } from '@ai-sdk/openai';
import type { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { openAICompatibleChat } from './openai-compatible/chat-model.ts';

export interface UpstreamSdk {
  createOpenAI: typeof createOpenAI;
  createOpenAICompatible: typeof createOpenAICompatible;
  /** an OpenAI-compatible chat model that reads its answers itself (openai-compatible/chat-model.ts) */
  openAICompatibleChat: typeof openAICompatibleChat;
  /** present when a provider of type anthropic is configured */
  createAnthropic?: typeof createAnthropic | undefined;
}

/** Anthropic's provider (@ai-sdk/anthropic), imported only when a provider of type anthropic is configured. */
export async function loadAnthropicSdk(): Promise<typeof createAnthropic> {
  return (await import('@ai-sdk/anthropic')).createAnthropic;
}

export async function loadUpstreamSdk(): Promise<UpstreamSdk> {
  const [openai, compatible, chat] = await Promise.all([import('@ai-sdk/openai'), import('@ai-sdk/openai-compatible'), import('./openai-compatible/chat-model.ts')]);
  return { createOpenAI: openai.createOpenAI, createOpenAICompatible: compatible.createOpenAICompatible, openAICompatibleChat: chat.openAICompatibleChat };
}
