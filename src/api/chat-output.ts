// What the gate keeps of a chat answer, whichever route and whether streamed or not: the route's body for
// it, no media, the tokens used (usage headers) and what it costs when metered (x402 `upto`).
import type { WorkOutput } from './endpoint.ts';
import type { ChatOutcome } from './chat.ts';

export function chatOutput(outcome: ChatOutcome, toBody: (outcome: ChatOutcome) => unknown): WorkOutput {
  return { body: toBody(outcome), media: [], usage: outcome.usage, cost: outcome.cost, finishReason: outcome.finishReason };
}
