// Errors on the OpenAI-compatible routes in OpenAI's shape: { error: { message, type, param, code } }.
// Only the shape is this module's: what an error is answered with and what is logged of it is decided for
// every surface by http/render-error.ts (errorAnswer). The 402 stays the x402 one.
import type { ErrorShape } from '../../http/render-error.ts';
import { reshapeGateError } from '../../http/render-error.ts';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's error types by status: what its SDKs map to their exception classes. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function openaiErrorBody(status: number, code: string, message: string, param: string | undefined): OpenAIErrorBody {
  return { error: { message, type: errorType(status), param: param ?? null, code } };
}

/** The /v1 surface's ErrorShape. */
export const openaiErrorShape: ErrorShape = ({ status, code, message, field }) => openaiErrorBody(status, code, message, field);

/** A gate answer other than 200 and 402 (409 settlement pending) rewritten in OpenAI's shape, headers kept. */
export function asOpenAIError(response: Response): Promise<Response> {
  return reshapeGateError(response, openaiErrorShape);
}
