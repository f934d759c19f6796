// What the gate keeps of a chat answer, whichever route and whether streamed or not: the route's body for
// it, no media, the tokens used (usage headers) and what it costs when metered (x402 `upto`).
import type { EventStream, PreparedCall, WorkOutput } from './endpoint.ts';
import type { ChatOutcome, PreparedChat } from './chat.ts';

export function chatOutput(outcome: ChatOutcome, toBody: (outcome: ChatOutcome) => unknown): WorkOutput {
  return { body: toBody(outcome), media: [], usage: outcome.usage, cost: outcome.cost, finishReason: outcome.finishReason };
}

/** The chat streamed: each delta to `onDelta` as the model makes it, what the gate keeps once it ends. */
export type StreamedChat = (onDelta: Parameters<PreparedChat['stream']>[0], signal: AbortSignal) => Promise<WorkOutput>;

/**
 * A prepared chat as one route's paid call: the whole answer, or, when the client asked for a stream, the route's
 * events over the streamed chat; either kept as chatOutput says.
 */
export function chatCall(chat: PreparedChat, toBody: (outcome: ChatOutcome) => unknown, events?: (streamed: StreamedChat) => EventStream): PreparedCall {
  const streamed: StreamedChat = async (onDelta, signal) => chatOutput(await chat.stream(onDelta, signal), toBody);
  return {
    model: chat.model,
    amount: chat.amount,
    run: async () => chatOutput(await chat.complete(), toBody),
    ...(events ? { events: events(streamed) } : {}),
  };
}
