// Errors on the OpenAI-compatible routes in OpenAI's shape: { error: { message, type, param, code } }.
// The same ApiError as everywhere else, rendered differently; the 402 stays the x402 one.
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { toApiError } from '../render-error.ts';
import { openaiErrorBody } from '../../api/openai/error-body.ts';

export function renderOpenAIError(error: unknown, c: Context, log: Logger): Response {
  const apiError = toApiError(error);
  if (apiError) {
    if (apiError.status >= 500) log.warn({ err: apiError.cause ?? apiError, reqId: c.get('requestId') }, apiError.message);
    return c.json(openaiErrorBody(apiError.status, apiError.code, apiError.message, apiError.field), apiError.status as 400, apiError.headers);
  }
  log.error({ err: error, reqId: c.get('requestId') }, 'unhandled error');
  return c.json(openaiErrorBody(500, 'internal_error', 'internal error; nothing was charged', undefined), 500);
}

/** A gate answer other than 200 and 402 (409 settlement pending) rewritten in OpenAI's shape, headers kept. */
export async function asOpenAIError(response: Response): Promise<Response> {
  if (response.status === 200 || response.status === 402) return response;
  const body = (await response.json()) as { error?: string; code?: string; field?: string; transaction?: string | null };
  const shaped = openaiErrorBody(response.status, body.code ?? 'error', body.error ?? 'request failed', body.field);
  const headers = new Headers(response.headers);
  headers.delete('Content-Length');
  return new Response(JSON.stringify(body.transaction === undefined ? shaped : { ...shaped, transaction: body.transaction }), {
    status: response.status,
    headers,
  });
}
