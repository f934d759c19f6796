// The model side of a coding agent's tool loop, scripted: "read this file, then answer from it". Given the tools a
// request offers and whether the conversation already holds a tool result, the next turn is either a call of the
// agent's file-reading tool (Claude Code's Read, Codex's exec_command or shell) or an answer quoting the result.
// The local upstreams speaking Anthropic's and OpenAI's protocols use it, behind the gateway or in front of it.

export type ScriptedTurn = { call: { name: string; arguments: Record<string, unknown> }; preamble: string } | { text: string };

/** how each agent's tools read a file */
const READERS: Record<string, (file: string) => Record<string, unknown>> = {
  Read: (file) => ({ file_path: file }),
  exec_command: (file) => ({ cmd: `cat ${file}` }),
  shell: (file) => ({ command: ['cat', file] }),
};

export const ANSWER_PREFIX = 'From the file: ';

/** what the model says beside its call, as models often do (a text part next to a tool call) */
export const PREAMBLE = 'Let me read the file.';

/**
 * The next turn: with no tool result yet and a reading tool offered, read `file` (saying so first); otherwise answer
 * with the last tool result's text (trimmed), so the agent's final answer carries what the file says.
 */
export function scriptedTurn(toolNames: readonly string[], lastToolResult: string | undefined, file: string): ScriptedTurn {
  const reader = toolNames.find((name) => READERS[name]);
  if (lastToolResult === undefined && reader) return { call: { name: reader, arguments: READERS[reader]!(file) }, preamble: PREAMBLE };
  return { text: `${ANSWER_PREFIX}${(lastToolResult ?? 'nothing was read').trim().slice(0, 500)}` };
}

/** The text of the last tool result of an Anthropic Messages conversation, if its last turn holds one. */
export function anthropicToolResult(body: { messages?: Array<{ role: string; content: unknown }> }): string | undefined {
  const last = body.messages?.at(-1);
  if (!Array.isArray(last?.content)) return undefined;
  const result = (last.content as Array<{ type: string; content?: unknown }>).findLast((block) => block.type === 'tool_result');
  if (!result) return undefined;
  return typeof result.content === 'string' ? result.content : JSON.stringify(result.content ?? '');
}

/** The text of the last tool output of a Responses input (function or custom), if any item after the last user message holds one. */
export function responsesToolResult(body: { input?: unknown }): string | undefined {
  if (!Array.isArray(body.input)) return undefined;
  const items = body.input as Array<{ type?: string; role?: string; output?: unknown }>;
  const lastUser = items.findLastIndex((item) => item.role === 'user');
  const output = items.slice(lastUser + 1).findLast((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output');
  if (!output) return undefined;
  return typeof output.output === 'string' ? output.output : JSON.stringify(output.output);
}

/** The text of the last tool message of a Chat Completions conversation, if it ends with tool messages. */
export function chatToolResult(body: { messages?: Array<{ role: string; content: unknown }> }): string | undefined {
  const last = body.messages?.at(-1);
  if (last?.role !== 'tool') return undefined;
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}
