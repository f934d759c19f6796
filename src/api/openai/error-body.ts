// OpenAI's error shape, { error: { message, type, param, code } }: what the OpenAI-compatible routes answer on a
// refusal (http/openai/errors.ts) and what their streams end with when the work fails.

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
