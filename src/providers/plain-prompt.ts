// A conversation of text turns as the model's prompt, built directly. For such a conversation the AI SDK's
// standardizePrompt and convertToLanguageModelPrompt (chat-completion.ts prepareCall) look for assets to
// download, convert each part, merge tool turns and check tool results: none of which applies, at ~5 us and
// ~4.5 KB of garbage a call (bench/upstream-overhead.ts, in its profile). The same object is written here, held
// to theirs by plain-prompt.test.ts; anything else (files, images, tool calls and results, reasoning, provider
// options, an empty conversation) is left to the SDK.
import type { ModelMessage } from 'ai';
import type { LanguageModelV4Prompt, LanguageModelV4TextPart } from '@ai-sdk/provider';

/** The prompt of a conversation of text turns; undefined when any turn is more than text. */
export function plainPrompt(messages: readonly ModelMessage[]): LanguageModelV4Prompt | undefined {
  if (messages.length === 0) return undefined; // the SDK's error to give
  const prompt: LanguageModelV4Prompt = [];
  for (const message of messages) {
    if (message.providerOptions !== undefined) return undefined;
    if (message.role === 'system') prompt.push({ role: 'system', content: message.content, providerOptions: undefined });
    else if (message.role === 'user' || message.role === 'assistant') {
      const content = textParts(message.content);
      if (!content) return undefined;
      prompt.push({ role: message.role, content, providerOptions: undefined });
    } else return undefined;
  }
  return prompt;
}

/**
 * A turn's content as text parts, as the SDK converts it: a string is one part (kept even when empty); of a list of
 * text parts, the empty ones are dropped.
 */
function textParts(content: ModelMessage['content']): LanguageModelV4TextPart[] | undefined {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: LanguageModelV4TextPart[] = [];
  for (const part of content) {
    if (part.type !== 'text' || part.providerOptions !== undefined) return undefined;
    if (part.text !== '') parts.push({ type: 'text', text: part.text, providerOptions: undefined });
  }
  return parts;
}
