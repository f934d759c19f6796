// Errors on the Anthropic-compatible routes (/v1/messages, /v1/messages/count_tokens) in Anthropic's shape:
// { type: "error", error: { type, message } }, with the status Anthropic would send. Only the shape is this
// module's: what an error is answered with and what is logged of it is decided for every surface by
// http/render-error.ts (errorAnswer). The 402 stays the x402 one (its PAYMENT-REQUIRED header and body are what
// a paying client reads).
import type { ErrorShape } from '../render-error.ts';
import { anthropicErrorBody } from '../../api/anthropic/error-body.ts';

/** The Anthropic surface's ErrorShape. */
export const anthropicErrorShape: ErrorShape = ({ status, message, details }) => anthropicErrorBody(status, message, details);
