// Errors on the Anthropic-compatible routes in Anthropic's shape: { type: "error", error: { type, message } },
// with the status Anthropic would send. The same ApiError as everywhere else, rendered differently; the 402
// stays the x402 one (its PAYMENT-REQUIRED header and body are what a paying client reads).
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { describeCause, toApiError } from '../render-error.ts';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** Anthropic's error types by status: what its SDK and clients read. */
export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function anthropicErrorBody(status: number, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message } };
}

export function renderAnthropicError(error: unknown, c: Context, log: Logger): Response {
  const apiError = toApiError(error);
  if (apiError) {
    if (apiError.status >= 500) log.warn({ cause: describeCause(apiError.cause ?? apiError), reqId: c.get('requestId') }, apiError.message);
    return c.json(anthropicErrorBody(apiError.status, apiError.message), apiError.status as 400, apiError.headers);
  }
  log.error({ cause: describeCause(error), reqId: c.get('requestId') }, 'unhandled error');
  return c.json(anthropicErrorBody(500, 'internal error; nothing was charged'), 500);
}

/** A gate answer other than 200 and 402 (409 settlement pending, 502 upstream) rewritten in Anthropic's shape, headers kept. */
export async function asAnthropicError(response: Response): Promise<Response> {
  if (response.status === 200 || response.status === 402) return response;
  const body = (await response.json()) as { error?: string; transaction?: string | null };
  const shaped = anthropicErrorBody(response.status, body.error ?? 'request failed');
  const headers = new Headers(response.headers);
  headers.delete('Content-Length');
  return new Response(JSON.stringify(body.transaction === undefined ? shaped : { ...shaped, transaction: body.transaction }), {
    status: response.status,
    headers,
  });
}
