// The embedded chat engine's converters, named by direction (as the AI SDK's providers name theirs): the AI SDK
// prompt into node-llama-cpp's chat history, cut to the window the context holds; node-llama-cpp's stop reason
// and token counts back into the AI SDK's finish reason and usage.
import {
  UnsupportedFunctionalityError,
  type LanguageModelV4FinishReason,
  type LanguageModelV4Prompt,
  type LanguageModelV4Usage,
} from '@ai-sdk/provider';
import type { ChatHistoryItem, LlamaChatResponse } from 'node-llama-cpp';

/** Joins the text parts of a message, tool calls written out as text; images are not understood by this engine. */
function textOf(parts: ReadonlyArray<{ type: string; text?: string; toolName?: string; input?: unknown }>, role: string): string {
  const texts: string[] = [];
  for (const part of parts) {
    if (part.type === 'text') texts.push(part.text ?? '');
    else if (part.type === 'reasoning') continue;
    else if (part.type === 'tool-call') texts.push(`\n${part.toolName}(${typeof part.input === 'string' ? part.input : JSON.stringify(part.input)})`);
    else throw new UnsupportedFunctionalityError({ functionality: `${part.type} parts in ${role} messages (local llama.cpp chat is text only)` });
  }
  return texts.join('');
}

/** A tool message as the text of a user turn: what each call returned. */
function toolResultsText(parts: ReadonlyArray<{ type: string; toolName?: string; output?: { type: string; value?: unknown } }>): string {
  return parts
    .filter((part) => part.type === 'tool-result')
    .map((part) => `${part.toolName} returned ${typeof part.output?.value === 'string' ? part.output.value : JSON.stringify(part.output?.value ?? null)}`)
    .join('\n');
}

/** Maps the AI SDK prompt onto node-llama-cpp's chat history, ending with the model turn to fill. */
export function convertToLlamaChatHistory(prompt: LanguageModelV4Prompt): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const push = (item: ChatHistoryItem) => {
    const last = history.at(-1);
    // merge consecutive turns of the same role: chat templates expect alternation
    if (last?.type === 'system' && item.type === 'system' && typeof last.text === 'string' && typeof item.text === 'string') {
      last.text = `${last.text}\n\n${item.text}`;
    } else if (last?.type === 'user' && item.type === 'user') {
      last.text = `${last.text}\n\n${item.text}`;
    } else if (last?.type === 'model' && item.type === 'model') {
      last.response.push(...item.response);
    } else {
      history.push(item);
    }
  };
  for (const message of prompt) {
    switch (message.role) {
      case 'system':
        push({ type: 'system', text: message.content });
        break;
      case 'user':
        push({ type: 'user', text: textOf(message.content, 'user') });
        break;
      case 'assistant':
        push({ type: 'model', response: [textOf(message.content, 'assistant')] });
        break;
      case 'tool':
        push({ type: 'user', text: toolResultsText(message.content) });
        break;
    }
  }
  // an assistant message at the end is a prefix to continue; otherwise open a new model turn
  if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
  return history;
}

/** characters a token covers at most, for the first cut (a rough bound: the exact count follows) */
const CHARS_PER_TOKEN = 16;
/** what a turn's markers count for in the first cut, in characters */
const CHARS_PER_TURN = 16;
const CUTS = 6;

/**
 * The history cut to the `available` tokens the context has for it: the newest turns whole while they fit, the
 * oldest kept one cut to its end, older ones left out (the system prompt too, when the conversation fills the
 * window). A first cut by characters keeps the tokenizer's work bounded whatever the prompt's size; then the
 * rendered prompt is counted and cut again in proportion until it fits. Deterministic: the same prompt, the same
 * window.
 */
export function fitChatHistoryWindow(
  history: readonly ChatHistoryItem[],
  available: number,
  tokensOf: (history: ChatHistoryItem[]) => number,
): { history: ChatHistoryItem[]; tokens: number; cut: boolean } {
  let chars = available * CHARS_PER_TOKEN;
  let cut = false;
  for (let attempt = 0; attempt < CUTS; attempt++) {
    const window = lastChars(history, chars);
    cut ||= window.cut;
    const tokens = tokensOf(window.history);
    if (tokens <= available) return { history: window.history, tokens, cut };
    cut = true;
    chars = Math.floor((Math.min(chars, window.chars) * available * 0.9) / tokens);
  }
  const bare = lastChars(history, 0).history;
  return { history: bare, tokens: tokensOf(bare), cut: true };
}

/** The history's last `chars` characters (each turn counting CHARS_PER_TURN besides its text), and their count. */
function lastChars(history: readonly ChatHistoryItem[], chars: number): { history: ChatHistoryItem[]; chars: number; cut: boolean } {
  const kept: ChatHistoryItem[] = [];
  let left = chars;
  for (let i = history.length - 1; i >= 0; i--) {
    const item = history[i]!;
    const size = textLength(item) + CHARS_PER_TURN;
    if (size <= left) {
      kept.unshift(item);
      left -= size;
      continue;
    }
    // the model turn to fill (the last item) is always kept, cut to its end when it is a long prefix
    if (left > CHARS_PER_TURN || i === history.length - 1) kept.unshift(tail(item, Math.max(0, left - CHARS_PER_TURN)));
    return { history: kept, chars, cut: true };
  }
  return { history: kept, chars: chars - left, cut: false };
}

function textLength(item: ChatHistoryItem): number {
  if (item.type === 'model') return item.response.reduce((sum, part) => sum + (typeof part === 'string' ? part.length : 0), 0);
  return typeof item.text === 'string' ? item.text.length : 0;
}

/** The item with only the last `chars` characters of its text (never starting inside a surrogate pair). */
function tail(item: ChatHistoryItem, chars: number): ChatHistoryItem {
  const end = (text: string) => {
    let start = Math.max(0, text.length - chars);
    if (start > 0 && /[\uDC00-\uDFFF]/.test(text[start]!)) start += 1;
    return text.slice(start);
  };
  if (item.type === 'model') return { type: 'model', response: [end(item.response.filter((part) => typeof part === 'string').join(''))] };
  return { ...item, text: end(typeof item.text === 'string' ? item.text : '') } as ChatHistoryItem;
}

export function mapLlamaFinishReason(stopReason: LlamaChatResponse['metadata']['stopReason']): LanguageModelV4FinishReason {
  switch (stopReason) {
    case 'maxTokens':
      return { unified: 'length', raw: stopReason };
    case 'eogToken':
    case 'stopGenerationTrigger':
    case 'customStopTrigger':
      return { unified: 'stop', raw: stopReason };
    default:
      return { unified: 'other', raw: stopReason };
  }
}

export function convertLlamaUsage(inputTokens: number, outputTokens: number): LanguageModelV4Usage {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    raw: { prompt_tokens: inputTokens, completion_tokens: outputTokens },
  };
}
