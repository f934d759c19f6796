// The server-sent events of POST /v1/messages with `stream: true`, in Anthropic's order, each
// `event: <type>` then `data: { type, ... }`:
//   message_start (the message with no content; usage.input_tokens 0 until message_delta says),
//   ping,
//   for the text, as the model writes it: content_block_start, content_block_delta (text_delta) ...;
//   once the model is done: content_block_stop;
//   for each tool call: content_block_start (tool_use, input {}), content_block_delta (input_json_delta),
//   content_block_stop;
//   then, once the payment settled, message_delta (stop_reason, stop_sequence, the whole usage) and
//   message_stop carrying `x402`, the receipt.
// A stream that stops short ends with an `error` event ({ type: "error", error: { type, message } }), which the
// Anthropic SDK raises as an APIError. A kept result sent again (a replay) is the same sequence, whole.
import type { EventStream, StreamReceipt, WorkOutput } from '../endpoint.ts';
import type { MessagesResponse, ResponseBlock } from './schemas.ts';
import { anthropicErrorType } from './errors.ts';

export interface MessagesStreamSource {
  /** the message of message_start: no content, no stop reason yet */
  pending: MessagesResponse;
  /** runs the call, handing on each piece of text as the model writes it */
  run(onText: (delta: string) => void, signal: AbortSignal): Promise<WorkOutput>;
}

const event = (type: string, fields: Record<string, unknown> = {}): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

export function messagesEvents(source: MessagesStreamSource): EventStream {
  // whether the text block was opened while the model was writing (live), so the end closes it
  let textOpen = false;
  const opening = () => event('message_start', { message: source.pending }) + event('ping');
  const textStart = (index: number) => event('content_block_start', { index, content_block: { type: 'text', text: '' } });
  const textDelta = (index: number, text: string) => event('content_block_delta', { index, delta: { type: 'text_delta', text } });
  const stop = (index: number) => event('content_block_stop', { index });
  const wholeBlock = (index: number, block: ResponseBlock): string => {
    if (block.type === 'text') return textStart(index) + textDelta(index, block.text) + stop(index);
    return (
      event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }) +
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }) +
      stop(index)
    );
  };

  return {
    run(write, signal) {
      write(opening());
      return source.run((delta) => {
        if (!textOpen) write(textStart(0));
        textOpen = true;
        write(textDelta(0, delta));
      }, signal);
    },
    end(body, receipt: StreamReceipt, replayed) {
      const message = body as MessagesResponse;
      let events = replayed ? opening() : '';
      message.content.forEach((block, index) => {
        events += !replayed && textOpen && index === 0 && block.type === 'text' ? stop(0) : wholeBlock(index, block);
      });
      return (
        events +
        event('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: message.usage }) +
        event('message_stop', { x402: receipt })
      );
    },
    failure({ status, message }) {
      return event('error', { error: { type: anthropicErrorType(status), message } });
    },
  };
}
