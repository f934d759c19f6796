// The server-sent events of POST /v1/responses with `stream: true`, in OpenAI's order, each `event: <type>`
// then `data: { type, ..., sequence_number }` (numbered from 0 in the order sent):
//   response.created, response.in_progress (the response with no output yet);
//   for the message, as the model writes it: response.output_item.added, response.content_part.added,
//   response.output_text.delta ...; once the model is done: response.output_text.done,
//   response.content_part.done, response.output_item.done;
//   for each function call: response.output_item.added, response.function_call_arguments.delta,
//   response.function_call_arguments.done, response.output_item.done;
//   then, once the payment settled, response.completed (response.incomplete when the answer was cut at
//   max_output_tokens) with the whole response and `x402`, the receipt, beside it.
// A stream that stops short ends with an `error` event ({ type: "error", code, message, param }), which the
// openai SDK raises as an APIError. A kept result sent again (a replay) is the same sequence, whole.
import type { EventStream, StreamReceipt, WorkOutput } from '../endpoint.ts';
import type { OutputItem, OutputMessage, ResponsesResponse } from './responses-schemas.ts';

/** what the stream needs of the call: the response as it stands before any output, and the live text */
export interface ResponsesStreamSource {
  /** the response object of response.created: status in_progress, no output, no usage */
  pending: ResponsesResponse;
  /** the id the message item will carry, so live deltas and the final body agree */
  messageId: string;
  /** runs the call, handing on each piece of text as the model writes it */
  run(onText: (delta: string) => void, signal: AbortSignal): Promise<WorkOutput>;
}

export function responsesEvents(source: ResponsesStreamSource): EventStream {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;
  // whether the message item was opened while the model was writing (live), so the end closes it
  let messageOpen = false;

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
  const wholeItem = (index: number, item: OutputItem): string => {
    if (item.type === 'message') return messageStart(index, item.id) + textDelta(index, item.id, item.content[0]?.text ?? '') + messageEnd(index, item);
    return (
      event('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } }) +
      event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: item.arguments }) +
      event('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments }) +
      event('response.output_item.done', { output_index: index, item })
    );
  };

  return {
    run(write, signal) {
      write(opening());
      return source.run((delta) => {
        if (!messageOpen) write(messageStart(0, source.messageId));
        messageOpen = true;
        write(textDelta(0, source.messageId, delta));
      }, signal);
    },
    end(body, receipt: StreamReceipt, replayed) {
      const response = body as ResponsesResponse;
      let events = replayed ? opening() : '';
      response.output.forEach((item, index) => {
        const streamedLive = !replayed && messageOpen && item.type === 'message' && item.id === source.messageId;
        events += streamedLive ? messageEnd(index, item as OutputMessage) : wholeItem(index, item);
      });
      const closing = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      return events + event(closing, { response, x402: receipt });
    },
    failure({ code, message }) {
      return event('error', { code, message, param: null });
    },
  };
}
