// POST /v1/messages/count_tokens (free): an estimate of the tokens a Messages prompt holds.
import { systemText } from './messages.ts';
import type { AnthropicMessage, CountTokensRequest } from './schemas.ts';

/** characters per token of the estimate count_tokens gives (English text with common tokenizers) */
const CHARS_PER_TOKEN = 4;
/** tokens each message's role markers add */
const TOKENS_PER_MESSAGE = 4;

/**
 * POST /v1/messages/count_tokens (free): an estimate of the tokens the prompt holds, from its characters
 * (the price table charges input by the character, so the estimate is never what a call costs). Tool
 * definitions, tool inputs and results count as their JSON; an image counts as `imageChars` characters, the
 * model's imageInputChars, as the quote counts it.
 */
export function countTokens(request: CountTokensRequest, imageChars: number): { input_tokens: number } {
  let chars = (systemText(request.system) ?? '').length + JSON.stringify(request.tools ?? []).length - 2;
  for (const message of request.messages) {
    chars += typeof message.content === 'string' ? message.content.length : message.content.reduce((sum, block) => sum + blockChars(block, imageChars), 0);
  }
  return { input_tokens: Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * request.messages.length };
}

function blockChars(block: Exclude<AnthropicMessage['content'], string>[number], imageChars: number): number {
  if (block.type === 'text') return block.text.length;
  if (block.type === 'tool_use') return block.name.length + JSON.stringify(block.input).length;
  if (block.type === 'tool_result') return typeof block.content === 'string' ? block.content.length : JSON.stringify(block.content ?? []).length;
  return imageChars;
}
