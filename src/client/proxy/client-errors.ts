// The proxy's own refusals (a cap, a payee it will not pay, a gateway it cannot reach) in the error shape of the
// client that called: Anthropic's { type: "error", error: { type, message } } on /v1/messages, OpenAI's
// { error: { message, type, param, code } } everywhere else, so each agent shows the message as its own.
import { anthropicErrorBody, type AnthropicErrorBody } from '../../api/anthropic/error-body.ts';
import { openaiErrorBody, type OpenAIErrorBody } from '../../api/openai/error-body.ts';

export type Dialect = 'anthropic' | 'openai';

export const dialectOf = (path: string): Dialect => (path.startsWith('/v1/messages') ? 'anthropic' : 'openai');

/** what the proxy refuses with, as OpenAI's `code` */
export type ProxyErrorCode = 'spending_cap_reached' | 'payee_refused' | 'payment_refused' | 'payment_failed' | 'gateway_unreachable' | 'not_found' | 'payload_too_large' | 'forbidden';

export function proxyErrorBody(dialect: Dialect, status: number, code: ProxyErrorCode, message: string): AnthropicErrorBody | OpenAIErrorBody {
  return dialect === 'openai' ? openaiErrorBody(status, code, message, undefined) : anthropicErrorBody(status, message);
}
