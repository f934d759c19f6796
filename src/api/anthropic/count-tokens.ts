// POST /v1/messages/count_tokens (free): an estimate of the tokens a Messages prompt holds.
import type { ModelCatalog } from '../../providers/catalog.ts';
import { parseRequest } from '../validate.ts';
import { RequestNotes } from '../request-notes.ts';
import { systemText } from './messages.ts';
import { COUNT_TOKENS_FIELD_RULES, countTokensRequestSchema, type AnthropicMessage } from './schemas.ts';

/** characters per token of the estimate count_tokens gives (English text with common tokenizers) */
const CHARS_PER_TOKEN = 4;
/** tokens each message's role markers add */
const TOKENS_PER_MESSAGE = 4;

/**
 * POST /v1/messages/count_tokens (free): an estimate of the tokens the prompt holds, from its characters
 * (the price table charges input by the character, so the estimate is never what a call costs). Tool
 * definitions, tool inputs and results count as their JSON; an image counts as the model's imageInputChars, as
 * the quote counts it. The body is read as /v1/messages reads it (what it ignores is said in `notes`).
 */
export function countTokens(body: unknown, catalog: ModelCatalog): { count: { input_tokens: number }; notes: RequestNotes } {
  const notes = new RequestNotes();
  const request = parseRequest(countTokensRequestSchema, body, { style: 'dots', notes, rules: COUNT_TOKENS_FIELD_RULES });
  const { imageInputChars } = catalog.resolve('chat', request.model); // an unknown model is the same 400 as on /v1/messages
  let chars = (systemText(request.system) ?? '').length + JSON.stringify(request.tools ?? []).length - 2;
  for (const message of request.messages) {
    chars += typeof message.content === 'string' ? message.content.length : message.content.reduce((sum, block) => sum + blockChars(block, imageInputChars), 0);
  }
  return { count: { input_tokens: Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * request.messages.length }, notes };
}

function blockChars(block: Exclude<AnthropicMessage['content'], string>[number], imageChars: number): number {
  switch (block.type) {
    case 'text':
      return block.text.length;
    case 'thinking':
      return block.thinking.length;
    case 'redacted_thinking':
      return 0;
    case 'tool_use':
      return block.name.length + JSON.stringify(block.input).length;
    case 'tool_result':
      return typeof block.content === 'string' ? block.content.length : JSON.stringify(block.content ?? []).length;
    case 'image':
      return imageChars;
    default:
      // documents, search results and the blocks of tools Anthropic runs: as sent
      return JSON.stringify(block).length;
  }
}
