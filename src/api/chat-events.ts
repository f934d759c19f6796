// The event stream of POST /api/v1/ai/chat with `stream: true`: one `data:` event per piece of text
// ({ id, model, delta }), then the non-streamed 200 body with the payment receipt ({ id, model, response,
// usage, x402 }), then `data: [DONE]`. A stream that stops short ends with `data: { error, code }` instead.
import type { EventStream } from './endpoint.ts';
import { SSE_DONE, sseData } from './endpoint.ts';
import type { ChatOutcome, PreparedChat } from './chat.ts';
import type { ChatResponse } from './schemas.ts';
import { chatOutput } from './chat-output.ts';

export function specChatEvents(id: string, chat: PreparedChat, toBody: (outcome: ChatOutcome) => ChatResponse): EventStream {
  const model = chat.model.id;
  return {
    async run(write, signal) {
      // the spec route carries text only (its contract has no tool calls)
      const outcome = await chat.stream((delta) => {
        if (delta.type === 'text') write(sseData({ id, model, delta: delta.text }));
      }, signal);
      return chatOutput(outcome, toBody);
    },
    end(body, receipt, replayed) {
      const result = body as ChatResponse;
      const whole = replayed ? sseData({ id: result.id, model: result.model, delta: result.response }) : '';
      return `${whole}${sseData({ ...result, x402: receipt })}${SSE_DONE}`;
    },
    failure({ message, code }) {
      return sseData({ error: message, code });
    },
  };
}
