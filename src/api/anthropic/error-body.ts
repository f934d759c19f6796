// Anthropic's error shape, { type: "error", error: { type, message } }: what the Anthropic-compatible routes
// answer on a refusal (http/anthropic/errors.ts) and what their streams end with when the work fails.

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string; details?: Record<string, unknown> };
}

/** Anthropic's error types by status: what its SDK and clients read. */
export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** `details`: what the SDK acts on beside the message (error_code thread_unsupported_request: go on without threads) */
export function anthropicErrorBody(status: number, message: string, details?: Record<string, unknown>): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message, ...(details ? { details } : {}) } };
}
