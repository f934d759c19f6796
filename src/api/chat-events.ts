// The event stream of POST /api/v1/ai/chat with `stream: true`: one `data:` event per piece of text
// ({ id, model, delta }), then the non-streamed 200 body with the payment receipt ({ id, model, response,
// usage, x402 }), then `data: [DONE]`. A stream that stops short ends with `data: { error, code }` instead.
import type { EventStream } from './endpoint.ts';
import { SSE_DONE, sseData } from './endpoint.ts';
import type { ChatResponse } from './schemas.ts';
import type { StreamedChat } from './chat-output.ts';

export const specChatEvents =
  (id: string, model: string) =>
  (streamed: StreamedChat): EventStream => ({
    run(write, signal) {
      // the spec route carries text only (its contract has no tool calls)
      return streamed((delta) => {
        if (delta.type === 'text') return write(sseData({ id, model, delta: delta.text }));
      }, signal);
    },
    end(body, receipt, replayed) {
      const result = body as ChatResponse;
      const whole = replayed ? sseData({ id: result.id, model: result.model, delta: result.response }) : '';
      return `${whole}${sseData({ ...result, x402: receipt })}${SSE_DONE}`;
    },
    failure({ message, code }) {
      return sseData({ error: message, code });
    },
  });
