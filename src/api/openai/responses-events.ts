// The server-sent events of POST /v1/responses with `stream: true`, in OpenAI's order, each `event: <type>`
// then `data: { type, ..., sequence_number }` (numbered from 0 in the order sent):
//   response.created, response.in_progress (the response with no output yet);
//   for each reasoning item of a model that thinks: response.output_item.added, and while it says what it thought
//   response.reasoning_summary_part.added, response.reasoning_summary_text.delta ...; then
//   response.reasoning_summary_text.done, response.reasoning_summary_part.done, response.output_item.done;
//   for the message, as the model writes it: response.output_item.added, response.content_part.added,
//   response.output_text.delta ...; then response.output_text.done, response.content_part.done,
//   response.output_item.done;
//   for each function call: response.output_item.added, response.function_call_arguments.delta ...,
//   response.function_call_arguments.done, response.output_item.done;
//   for each call of a custom (freeform) tool: response.output_item.added, then once the input is whole
//   response.custom_tool_call_input.delta, response.custom_tool_call_input.done, response.output_item.done;
//   for each tool_search call: response.output_item.added, response.output_item.done;
//   each item done before the next is added, as OpenAI sends them;
//   then, once the payment settled, response.completed (response.incomplete when the answer was cut at
//   max_output_tokens) with the whole response and `x402`, the receipt, beside it.
// A stream that stops short ends with an `error` event ({ type: "error", code, message, param }), which the
// openai SDK raises as an APIError. A kept result sent again (a replay) is the same sequence, whole.
import type { EventStream, StreamReceipt, WorkOutput } from '../endpoint.ts';
import type { ChatDelta, ChatReasoningPart, ChatToolCall } from '../../providers/chat-model.ts';
import type { OutputCall, OutputItem, OutputMessage, OutputReasoning, ResponsesResponse } from './responses-schemas.ts';

/** what the stream needs of the call: the response as it stands before any output, the item shapes, the live deltas */
export interface ResponsesStreamSource {
  /** the response object of response.created: status in_progress, no output, no usage */
  pending: ResponsesResponse;
  /** the ids the items will carry, so live events and the final body agree */
  messageId: string;
  callItemId: (index: number, name: string) => string;
  /** the item of a reasoning part, of a call (of the kind of tool it calls) */
  reasoningItem: (part: ChatReasoningPart, index: number) => OutputReasoning;
  callItem: (call: ChatToolCall, id: string) => OutputCall;
  /**
   * runs the call, handing on each piece of the answer as the model writes it; the next piece is read from the
   * model only once the promise onDelta returns (if any) resolves (backpressure: see EventStream.run)
   */
  run(onDelta: (delta: ChatDelta) => Promise<void> | undefined, signal: AbortSignal): Promise<WorkOutput>;
}

/** an item opened while the model was writing: its output index, what it holds so far, whether it was closed */
interface LiveItem {
  index: number;
  item: OutputItem;
  closed: boolean;
  /** a call's arguments so far, and its reasoning part so far */
  call?: ChatToolCall;
  thought?: ChatReasoningPart & { index: number };
}

export function responsesEvents(source: ResponsesStreamSource): EventStream {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;
  // the items opened live, by item id, in the order the model opened them. As OpenAI does, an item is done before
  // the next one is added; the last one is closed at the end, from the final answer.
  const opened = new Map<string, LiveItem>();
  const callIds = new Map<number, string>();
  const thoughtIds = new Map<number, string>();
  let openId: string | undefined;

  const opening = () => event('response.created', { response: source.pending }) + event('response.in_progress', { response: source.pending });
  const added = (index: number, item: OutputItem) => event('response.output_item.added', { output_index: index, item });
  const done = (index: number, item: OutputItem) => event('response.output_item.done', { output_index: index, item });

  const messageStart = (index: number, id: string) =>
    added(index, { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] }) +
    event('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
  const textDelta = (index: number, id: string, delta: string) =>
    event('response.output_text.delta', { item_id: id, output_index: index, content_index: 0, delta, logprobs: [] });
  const summaryStart = (index: number, id: string) =>
    event('response.reasoning_summary_part.added', { item_id: id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
  const summaryDelta = (index: number, id: string, delta: string) => event('response.reasoning_summary_text.delta', { item_id: id, output_index: index, summary_index: 0, delta });
  const argumentsDelta = (index: number, id: string, delta: string) => event('response.function_call_arguments.delta', { item_id: id, output_index: index, delta });

  const itemStart = (index: number, item: OutputItem): string => {
    if (item.type === 'message') return messageStart(index, item.id);
    if (item.type === 'reasoning') return added(index, { type: 'reasoning', id: item.id, summary: [] });
    if (item.type === 'function_call') return added(index, { ...item, arguments: '', status: 'in_progress' });
    if (item.type === 'custom_tool_call') return added(index, { ...item, input: '', status: 'in_progress' });
    return added(index, { ...item, arguments: {}, status: 'in_progress' });
  };
  const itemEnd = (index: number, item: OutputItem): string => {
    const id = item.id;
    switch (item.type) {
      case 'message': {
        const text = item.content[0]?.text ?? '';
        return (
          event('response.output_text.done', { item_id: id, output_index: index, content_index: 0, text, logprobs: [] }) +
          event('response.content_part.done', { item_id: id, output_index: index, content_index: 0, part: item.content[0] }) +
          done(index, item)
        );
      }
      case 'reasoning': {
        const summary = item.summary[0];
        const told = summary
          ? event('response.reasoning_summary_text.done', { item_id: id, output_index: index, summary_index: 0, text: summary.text }) +
            event('response.reasoning_summary_part.done', { item_id: id, output_index: index, summary_index: 0, part: summary })
          : '';
        return told + done(index, item);
      }
      case 'function_call':
        return event('response.function_call_arguments.done', { item_id: id, output_index: index, name: item.name, arguments: item.arguments }) + done(index, item);
      case 'custom_tool_call':
        return (
          event('response.custom_tool_call_input.delta', { item_id: id, output_index: index, delta: item.input }) +
          event('response.custom_tool_call_input.done', { item_id: id, output_index: index, input: item.input }) +
          done(index, item)
        );
      default:
        return done(index, item);
    }
  };
  /** an item sent whole (a replay, or one the model gave only at the end) */
  const wholeItem = (index: number, item: OutputItem): string => {
    // (in the order sent: each event takes the next sequence number as it is written)
    let events = itemStart(index, item);
    if (item.type === 'message') events += textDelta(index, item.id, item.content[0]?.text ?? '');
    else if (item.type === 'function_call') events += argumentsDelta(index, item.id, item.arguments);
    else if (item.type === 'reasoning' && item.summary[0]) events += summaryStart(index, item.id) + summaryDelta(index, item.id, item.summary[0].text);
    return events + itemEnd(index, item);
  };

  /** what a live item holds now, built from what it received (a call's arguments, a reasoning part's text) */
  const current = (live: LiveItem): OutputItem => {
    if (live.call) return source.callItem(live.call, live.item.id);
    if (live.thought) return source.reasoningItem(live.thought, live.thought.index);
    return live.item;
  };
  /** closes the item still open live, from what it received */
  const closeOpen = (): string => {
    const live = openId === undefined ? undefined : opened.get(openId);
    openId = undefined;
    if (!live || live.closed) return '';
    live.closed = true;
    return itemEnd(live.index, current(live));
  };
  const openItem = (live: Omit<LiveItem, 'index' | 'closed'>): LiveItem => {
    const entry = { ...live, index: opened.size, closed: false };
    opened.set(live.item.id, entry);
    openId = live.item.id;
    return entry;
  };

  return {
    run(write, signal) {
      write(opening());
      // each piece's events go out in one write, whose promise holds the model back while the client reads nothing
      return source.run((delta) => {
        if (delta.type === 'text') {
          let message = opened.get(source.messageId);
          let events = '';
          if (!message) {
            events = closeOpen();
            const content = [{ type: 'output_text' as const, text: '', annotations: [], logprobs: [] }];
            message = openItem({ item: { type: 'message', id: source.messageId, status: 'completed', role: 'assistant', content } });
            events += messageStart(message.index, source.messageId);
          }
          // text after a call (rare) still belongs to the one message item
          (message.item as OutputMessage).content[0]!.text += delta.text;
          return write(events + textDelta(message.index, source.messageId, delta.text));
        }
        if (delta.type === 'reasoning') {
          let live = opened.get(thoughtIds.get(delta.index) ?? '');
          let events = '';
          if (!live) {
            events = closeOpen();
            const thought = { index: delta.index, text: '' };
            const item = source.reasoningItem(thought, delta.index);
            thoughtIds.set(delta.index, item.id);
            live = openItem({ item, thought });
            events += itemStart(live.index, item);
          }
          const thought = live.thought!;
          if (delta.text) {
            if (!thought.text) events += summaryStart(live.index, live.item.id);
            thought.text += delta.text;
            events += summaryDelta(live.index, live.item.id, delta.text);
          }
          if (delta.signature) thought.signature = delta.signature;
          if (delta.redacted !== undefined) thought.redacted = delta.redacted;
          return events ? write(events) : undefined;
        }
        if (delta.type === 'tool-call') {
          const closed = closeOpen();
          const call = { id: delta.id, name: delta.name, arguments: '' };
          const item = source.callItem(call, source.callItemId(delta.index, delta.name));
          callIds.set(delta.index, item.id);
          const live = openItem({ item, call });
          return write(closed + itemStart(live.index, item));
        }
        const live = opened.get(callIds.get(delta.index) ?? '');
        if (!live?.call || !delta.arguments) return undefined;
        live.call.arguments += delta.arguments;
        // a function's arguments stream as written; a custom tool's input and a search's are whole at the end
        return live.item.type === 'function_call' ? write(argumentsDelta(live.index, live.item.id, delta.arguments)) : undefined;
      }, signal);
    },
    end(body, receipt: StreamReceipt, replayed) {
      const kept = body as ResponsesResponse;
      let events = replayed ? opening() : '';
      // the items opened live keep their indexes (the order the model opened them); any other follows
      const live = replayed ? [] : kept.output.filter((item) => opened.has(item.id)).sort((a, b) => opened.get(a.id)!.index - opened.get(b.id)!.index);
      const output = [...live, ...kept.output.filter((item) => !live.includes(item))];
      output.forEach((item, index) => {
        if (!live.includes(item)) events += wholeItem(index, item);
        else if (!opened.get(item.id)!.closed) events += itemEnd(index, item);
      });
      const closing = kept.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      return events + event(closing, { response: { ...kept, output }, x402: receipt });
    },
    failure({ code, message }) {
      return event('error', { code, message, param: null });
    },
  };
}
