// Errors on the Anthropic-compatible routes in Anthropic's shape: { type: "error", error: { type, message } },
// with the status Anthropic would send. The same ApiError as everywhere else, rendered differently; the 402
// stays the x402 one (its PAYMENT-REQUIRED header and body are what a paying client reads).
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { describeCause, toApiError } from '../render-error.ts';
import { anthropicErrorBody } from '../../api/anthropic/error-body.ts';

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
