// The tools of a Responses request as the model is given them, and the model's calls as the Responses items the
// client expects back. Codex declares more than functions:
// - a `custom` (freeform) tool, whose input is text in a grammar (apply_patch), is a function of one string
//   argument, `input`, its grammar in the description; its calls go back as `custom_tool_call` items;
// - a `namespace` groups tools: each is offered as <namespace>__<name>, its calls go back under the namespace;
// - a client-executed `tool_search` is a function named tool_search; its calls go back as `tool_search_call`;
// - a tool OpenAI runs itself (web_search, file_search, ...) cannot run here: it is left out and noted.
import type { JSONSchema7 } from '@ai-sdk/provider';
import type { ChatTool, ChatToolCall } from '../../providers/chat-model.ts';
import { parseToolArguments } from '../../providers/chat-model.ts';
import type { RequestNotes } from '../request-notes.ts';
import type { OutputCall, ResponsesCustomTool, ResponsesFunctionTool, ResponsesTool } from './responses-schemas.ts';

type Kind = 'function' | 'custom' | 'tool_search';

interface OfferedTool {
  tool: ChatTool;
  /** where its schema sits in the request, for a refusal */
  field: string;
  kind: Kind;
  /** the name and namespace the client knows it by */
  name: string;
  namespace?: string | undefined;
}

const TOOL_SEARCH = 'tool_search';
const NO_ARGUMENTS: JSONSchema7 = { type: 'object', properties: {} };

export class ResponsesToolset {
  private readonly byModelName = new Map<string, OfferedTool>();
  private readonly notes: RequestNotes;

  constructor(notes: RequestNotes) {
    this.notes = notes;
  }

  /** the tools offered to the model, in the order declared */
  get offered(): readonly OfferedTool[] {
    return [...this.byModelName.values()];
  }

  /** Declares `tools` (at `field` of the request); a name declared before keeps its first declaration. */
  add(tools: readonly ResponsesTool[], field: string): void {
    tools.forEach((tool, index) => {
      const at = `${field}[${index}]`;
      if (tool.type === 'function' || tool.type === 'custom') this.offer(tool as ResponsesFunctionTool | ResponsesCustomTool, at, undefined);
      else if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
        const namespace = tool.name as string;
        (tool.tools as (ResponsesFunctionTool | ResponsesCustomTool)[]).forEach((inner, innerIndex) => this.offer(inner, `${at}.tools[${innerIndex}]`, namespace));
      } else if (tool.type === 'tool_search' && tool.execution === 'client') {
        const parameters = (tool.parameters ?? { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }) as JSONSchema7;
        this.put({ tool: { name: TOOL_SEARCH, description: (tool.description as string | null) ?? 'Searches for more tools', parameters }, field: `${at}.parameters`, kind: 'tool_search', name: TOOL_SEARCH });
      } else this.notes.ignore(at);
    });
  }

  /** The name the model knows a tool by: the client's own, or <namespace>__<name>. */
  modelName(name: string, namespace: string | undefined): string {
    return namespace ? `${namespace}__${name}` : name;
  }

  /** The Responses item of a call the model made; `id` the item's id. */
  callItem(call: ChatToolCall, id: string): OutputCall {
    const offered = this.byModelName.get(call.name);
    const namespace = offered?.namespace ? { namespace: offered.namespace } : {};
    const name = offered?.name ?? call.name;
    if (offered?.kind === 'custom') return { type: 'custom_tool_call', id, call_id: call.id, name, ...namespace, input: customInput(call.arguments), status: 'completed' };
    if (offered?.kind === 'tool_search') return { type: 'tool_search_call', id, call_id: call.id, arguments: parseToolArguments(call.arguments), execution: 'client', status: 'completed' };
    return { type: 'function_call', id, call_id: call.id, name, ...namespace, arguments: call.arguments, status: 'completed' };
  }

  /** the kind of item a call of the model's tool `name` goes back as */
  kindOf(name: string): Kind {
    return this.byModelName.get(name)?.kind ?? 'function';
  }

  private offer(tool: ResponsesFunctionTool | ResponsesCustomTool, at: string, namespace: string | undefined): void {
    const name = this.modelName(tool.name, namespace);
    // every tool is loaded up front
    if (tool.defer_loading) this.notes.ignore(`${at}.defer_loading`);
    if (tool.type === 'custom') {
      this.put({ tool: { name, description: customDescription(tool), parameters: CUSTOM_PARAMETERS }, field: at, kind: 'custom', name: tool.name, namespace });
      return;
    }
    const parameters = (tool.parameters ?? NO_ARGUMENTS) as JSONSchema7;
    this.put({ tool: { name, description: tool.description ?? undefined, parameters, strict: tool.strict ?? undefined }, field: `${at}.parameters`, kind: 'function', name: tool.name, namespace });
  }

  private put(offered: OfferedTool): void {
    if (!this.byModelName.has(offered.tool.name)) this.byModelName.set(offered.tool.name, offered);
  }
}

/** a custom tool's one argument: the text the tool takes */
const CUSTOM_PARAMETERS: JSONSchema7 = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The whole input of the tool, as the text itself' } },
  required: ['input'],
  additionalProperties: false,
};

function customDescription(tool: ResponsesCustomTool): string {
  const format = tool.format?.type === 'grammar' ? `, which must match this ${tool.format.syntax} grammar:\n${tool.format.definition}` : '';
  return `${tool.description ?? ''}\n\nCall it with one argument, "input": the text of the input itself${format}`.trim();
}

/** A custom call's input: the `input` argument the model wrote, or its whole arguments when they are not that. */
function customInput(argumentsJson: string): string {
  const parsed = parseToolArguments(argumentsJson);
  if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { input?: unknown }).input === 'string') return (parsed as { input: string }).input;
  return typeof parsed === 'string' ? parsed : argumentsJson;
}
