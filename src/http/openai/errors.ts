// Errors on the OpenAI-compatible routes in OpenAI's shape: { error: { message, type, param, code } }.
// Only the shape is this module's: what an error is answered with and what is logged of it is decided for
// every surface by http/render-error.ts (errorAnswer). The 402 stays the x402 one.
import type { ErrorShape } from '../render-error.ts';
import { openaiErrorBody } from '../../api/openai/error-body.ts';

/** The /v1 surface's ErrorShape. */
export const openaiErrorShape: ErrorShape = ({ status, code, message, field }) => openaiErrorBody(status, code, message, field);
