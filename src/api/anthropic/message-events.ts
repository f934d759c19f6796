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
import type { ChatDelta } from '../../providers/chat-model.ts';
import type { MessagesResponse, ResponseBlock } from './schemas.ts';
import { anthropicErrorType } from './error-body.ts';

export interface MessagesStreamSource {
  /** the message of message_start: no content, no stop reason yet */
  pending: MessagesResponse;
  /** the tool_use block id of a model's call id, as the final body names it */
  toolUseId: (callId: string) => string;
  /**
   * runs the call, handing on each piece of the answer as the model writes it; the next piece is read from the
   * model only once the promise onDelta returns (if any) resolves (backpressure: see EventStream.run)
   */
  run(onDelta: (delta: ChatDelta) => Promise<void> | undefined, signal: AbortSignal): Promise<WorkOutput>;
}

const event = (type: string, fields: Record<string, unknown> = {}): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

/** a block's key: the text block, or a tool_use block by its id */
const TEXT = 'text';
const keyOf = (block: ResponseBlock) => (block.type === 'text' ? TEXT : block.id);

export function messagesEvents(source: MessagesStreamSource): EventStream {
  // the index of each block opened while the model was writing (live), so the end closes them in that order
  const opened = new Map<string, number>();
  // the live block of each streamed call, by the call's index in the answer
  const callKeys = new Map<number, string>();
  // as Anthropic does, a block stops before the next one starts: the index of the one still open
  let openIndex: number | undefined;
  /** opens the block of `key`: the events that stop the one still open (if any) and start it are the caller's to write */
  const open = (key: string): { index: number; stopped: string } => {
    const stopped = openIndex === undefined ? '' : stop(openIndex);
    openIndex = opened.size;
    opened.set(key, openIndex);
    return { index: openIndex, stopped };
  };
  const opening = () => event('message_start', { message: source.pending }) + event('ping');
  const textStart = (index: number) => event('content_block_start', { index, content_block: { type: 'text', text: '' } });
  const textDelta = (index: number, text: string) => event('content_block_delta', { index, delta: { type: 'text_delta', text } });
  const toolStart = (index: number, id: string, name: string) => event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } });
  const jsonDelta = (index: number, json: string) => event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json } });
  const stop = (index: number) => event('content_block_stop', { index });
  const wholeBlock = (index: number, block: ResponseBlock): string => {
    if (block.type === 'text') return textStart(index) + textDelta(index, block.text) + stop(index);
    return toolStart(index, block.id, block.name) + jsonDelta(index, JSON.stringify(block.input)) + stop(index);
  };

  return {
    run(write, signal) {
      write(opening());
      // each piece's events go out in one write, whose promise holds the model back while the client reads nothing
      return source.run((delta) => {
        if (delta.type === 'text') {
          // text after a tool call (rare) opens a new block; the kept message holds all its text in one
          let events = '';
          if (opened.get(TEXT) !== openIndex || openIndex === undefined) {
            const { index, stopped } = open(TEXT);
            events = stopped + textStart(index);
          }
          return write(events + textDelta(opened.get(TEXT)!, delta.text));
        }
        if (delta.type === 'tool-call') {
          const id = source.toolUseId(delta.id);
          callKeys.set(delta.index, id);
          const { index, stopped } = open(id);
          return write(stopped + toolStart(index, id, delta.name));
        }
        const index = opened.get(callKeys.get(delta.index) ?? '');
        return index !== undefined && delta.arguments ? write(jsonDelta(index, delta.arguments)) : undefined;
      }, signal);
    },
    end(body, receipt: StreamReceipt, replayed) {
      const message = body as MessagesResponse;
      let events = replayed ? opening() : '';
      // the blocks opened live keep their indexes (in the order the model wrote them); any other follows
      const live = replayed ? [] : message.content.filter((block) => opened.has(keyOf(block))).sort((a, b) => opened.get(keyOf(a))! - opened.get(keyOf(b))!);
      const rest = message.content.filter((block) => !live.includes(block));
      if (openIndex !== undefined && !replayed) events += stop(openIndex);
      rest.forEach((block, at) => (events += wholeBlock(live.length + at, block)));
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
