// The gateway's chat model: what every chat surface (/api/v1/ai/chat, /v1/chat/completions, /v1/responses,
// /v1/messages) translates its request into, and what it gets back, whichever provider answers.
//
// Provider-neutral by choice of the AI SDK's own prompt types: the conversation is `ModelMessage[]` from `ai`
// (system / user / assistant / tool turns; text, image, tool-call and tool-result parts), because every
// provider, upstream or embedded, is reached through the AI SDK and converts from exactly these. Tools,
// tool choice and the response format are small gateway types here (OpenAI's and Anthropic's words map onto
// them one to one) and chat.ts turns them into the AI SDK's LanguageModelV4 call options.
//
// How each surface states a conversation in ModelMessage terms:
// - an assistant turn that called tools: { role: 'assistant', content: [{ type: 'text', text }?,
//   { type: 'tool-call', toolCallId, toolName, input }] }; `input` is the parsed arguments object (the raw
//   string when it is not JSON)
// - a tool result: { role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName, output: { type: 'text',
//   value } | { type: 'json', value } }] }; toolName from the assistant turn that made the call (toolNameOf)
// - an image in a user turn: { type: 'image', image: Uint8Array (a data URL's bytes) | URL (remote), mediaType }.
//   Remote URLs are fetched by the gateway itself at call time, public addresses only, bounded (image-input.ts).
import type { JSONSchema7, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { nestsTooDeep } from '../lib/json-nesting.ts';

/** A function the model may call. `parameters` is a JSON Schema (an object schema). */
export interface ChatTool {
  name: string;
  description?: string | undefined;
  parameters: JSONSchema7;
  /** the provider should follow the schema exactly (OpenAI strict mode); the embedded engine always does */
  strict?: boolean | undefined;
  /** what the provider that reads it gets with the tool (Anthropic's cache_control: { anthropic: { cacheControl } }) */
  providerOptions?: SharedV4ProviderOptions | undefined;
}

/** auto: the model decides; none: no call; required: at least one call; { tool }: a call of that function. */
export type ChatToolChoice = 'auto' | 'none' | 'required' | { tool: string };

export type ChatResponseFormat =
  | { type: 'text' }
  /** any JSON object */
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; description?: string | undefined; schema: JSONSchema7; strict?: boolean | undefined };

/**
 * How a reasoning model is asked to think (models whose `supports.reasoning` is true; docs/agent-chat.md). Each
 * surface states it in its own words: Anthropic's `thinking` and `output_config.effort`, OpenAI's `reasoning`
 * and `reasoning_effort`.
 */
export interface ChatReasoning {
  /** Anthropic's extended thinking: with a token budget (counted in the answer's tokens), adaptive, or off */
  thinking?: { type: 'enabled'; budgetTokens: number } | { type: 'adaptive' } | { type: 'disabled' } | undefined;
  /** whether the thinking text comes back: Anthropic's `display` (summarized, omitted) */
  display?: 'summarized' | 'omitted' | undefined;
  /** how hard to think: low, medium, high (and the provider's own levels: minimal, xhigh, max) */
  effort?: string | undefined;
}

/**
 * What the model thought before it answered, as the provider returns it: the text (a summary, or empty when
 * withheld), and what the provider needs to be handed it back in a later turn (Anthropic's signature, or its
 * redacted thinking; OpenAI's encrypted reasoning).
 */
export interface ChatReasoningPart {
  text: string;
  signature?: string | undefined;
  redacted?: string | undefined;
}

/** A call the model made: `arguments` is the JSON text of the arguments, as the model wrote it. */
export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Why the answer ended, in OpenAI's words (Anthropic's: end_turn, max_tokens, tool_use, refusal). */
export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * One piece of a streamed answer, in the order the model produces them. A tool call opens with `tool-call`
 * (its index among this answer's calls, id and name), then its arguments arrive as `tool-arguments`
 * fragments whose concatenation is the call's `arguments`.
 */
export type ChatDelta =
  | { type: 'text'; text: string }
  /** a piece of the model's thinking (block `index` of this answer's reasoning), its signature or redacted form once known */
  | { type: 'reasoning'; index: number; text: string; signature?: string | undefined; redacted?: string | undefined }
  | { type: 'tool-call'; index: number; id: string; name: string }
  | { type: 'tool-arguments'; index: number; arguments: string };

/** The tools part of a chat call. */
export interface ChatToolsRequest {
  tools?: ChatTool[] | undefined;
  toolChoice?: ChatToolChoice | undefined;
  /** false: at most one call per answer (upstreams that support the switch get it; the embedded engine makes one) */
  parallelToolCalls?: boolean | undefined;
}

export type { ModelMessage };

/**
 * Whether the conversation's last turn answers tool calls: a tool result after the last assistant message, with or
 * without the client's own text after it (Claude Code adds reminders next to a tool's result, which a user turn
 * carries after the tool's).
 */
export function endsWithToolResult(messages: readonly { role: string }[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = messages[i]!.role;
    if (role === 'tool') return true;
    if (role !== 'user' && role !== 'system') return false;
  }
  return false;
}

/** The name of the tool a tool call of the conversation called: what a tool result needs and OpenAI omits. */
export function toolNameOf(messages: readonly ModelMessage[], toolCallId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) if (part.type === 'tool-call' && part.toolCallId === toolCallId) return part.toolName;
  }
  return undefined;
}

/** Arguments as a tool-call part holds them: the parsed JSON, or the text itself when it is not JSON (or nests too deep). */
export function parseToolArguments(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  // nested past what can be serialised again (the upstream request, the answer): kept as the text it came as
  return nestsTooDeep(parsed, text.length) ? text : parsed;
}
