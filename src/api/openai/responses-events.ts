// The server-sent events of POST /v1/responses with `stream: true`, in OpenAI's order, each `event: <type>`
// then `data: { type, ..., sequence_number }` (numbered from 0 in the order sent):
//   response.created, response.in_progress (the response with no output yet);
//   for the message, as the model writes it: response.output_item.added, response.content_part.added,
//   response.output_text.delta ...; then response.output_text.done, response.content_part.done,
//   response.output_item.done;
//   for each function call: response.output_item.added, response.function_call_arguments.delta ...,
//   response.function_call_arguments.done, response.output_item.done;
//   each item done before the next is added, as OpenAI sends them;
//   then, once the payment settled, response.completed (response.incomplete when the answer was cut at
//   max_output_tokens) with the whole response and `x402`, the receipt, beside it.
// A stream that stops short ends with an `error` event ({ type: "error", code, message, param }), which the
// openai SDK raises as an APIError. A kept result sent again (a replay) is the same sequence, whole.
import type { EventStream, StreamReceipt, WorkOutput } from '../endpoint.ts';
import type { ChatDelta } from '../../providers/chat-model.ts';
import type { OutputFunctionCall, OutputItem, OutputMessage, ResponsesResponse } from './responses-schemas.ts';

/** what the stream needs of the call: the response as it stands before any output, and the live deltas */
export interface ResponsesStreamSource {
  /** the response object of response.created: status in_progress, no output, no usage */
  pending: ResponsesResponse;
  /** the ids the message item and the function-call items will carry, so live events and the final body agree */
  messageId: string;
  callItemId: (index: number) => string;
  /**
   * runs the call, handing on each piece of the answer as the model writes it; the next piece is read from the
   * model only once the promise onDelta returns (if any) resolves (backpressure: see EventStream.run)
   */
  run(onDelta: (delta: ChatDelta) => Promise<void> | undefined, signal: AbortSignal): Promise<WorkOutput>;
}

export function responsesEvents(source: ResponsesStreamSource): EventStream {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;
  // the items opened while the model was writing (live), by item id: their output index (the order the model
  // opened them), what they hold so far, and whether they were closed. As OpenAI does, an item is done before
  // the next one is added; the last one is closed at the end, from the final answer.
  const opened = new Map<string, { index: number; item: OutputItem; closed: boolean }>();
  let openId: string | undefined;

  const opening = () => event('response.created', { response: source.pending }) + event('response.in_progress', { response: source.pending });
  const messageStart = (index: number, id: string) =>
    event('response.output_item.added', { output_index: index, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }) +
    event('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
  const textDelta = (index: number, id: string, delta: string) =>
    event('response.output_text.delta', { item_id: id, output_index: index, content_index: 0, delta, logprobs: [] });
  const messageEnd = (index: number, item: OutputMessage) => {
    const text = item.content[0]?.text ?? '';
    return (
      event('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] }) +
      event('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part: item.content[0] }) +
      event('response.output_item.done', { output_index: index, item })
    );
  };
  const callStart = (index: number, item: Pick<OutputFunctionCall, 'id' | 'call_id' | 'name'>) =>
    event('response.output_item.added', { output_index: index, item: { type: 'function_call', ...item, arguments: '', status: 'in_progress' } });
  const argumentsDelta = (index: number, id: string, delta: string) => event('response.function_call_arguments.delta', { item_id: id, output_index: index, delta });
  const callEnd = (index: number, item: OutputFunctionCall) =>
    event('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments }) +
    event('response.output_item.done', { output_index: index, item });
  const itemEnd = (index: number, item: OutputItem) => (item.type === 'message' ? messageEnd(index, item) : callEnd(index, item));
  const wholeItem = (index: number, item: OutputItem): string => {
    if (item.type === 'message') return messageStart(index, item.id) + textDelta(index, item.id, item.content[0]?.text ?? '') + messageEnd(index, item);
    return callStart(index, item) + argumentsDelta(index, item.id, item.arguments) + callEnd(index, item);
  };

  /** closes the item still open live, from what it received (its text, its arguments) */
  const closeOpen = (): string => {
    const live = openId === undefined ? undefined : opened.get(openId);
    openId = undefined;
    if (!live || live.closed) return '';
    live.closed = true;
    return itemEnd(live.index, live.item);
  };
  const openItem = (item: OutputItem): number => {
    const index = opened.size;
    opened.set(item.id, { index, item, closed: false });
    openId = item.id;
    return index;
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
            const index = openItem({ type: 'message', id: source.messageId, status: 'completed', role: 'assistant', content });
            events += messageStart(index, source.messageId);
            message = opened.get(source.messageId)!;
          }
          // text after a call (rare) still belongs to the one message item
          (message.item as OutputMessage).content[0]!.text += delta.text;
          return write(events + textDelta(message.index, source.messageId, delta.text));
        }
        if (delta.type === 'tool-call') {
          const closed = closeOpen();
          const id = source.callItemId(delta.index);
          const index = openItem({ type: 'function_call', id, call_id: delta.id, name: delta.name, arguments: '', status: 'completed' });
          return write(closed + callStart(index, { id, call_id: delta.id, name: delta.name }));
        }
        const live = opened.get(source.callItemId(delta.index));
        if (!live || !delta.arguments) return undefined;
        (live.item as OutputFunctionCall).arguments += delta.arguments;
        return write(argumentsDelta(live.index, live.item.id, delta.arguments));
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
