// The one error type of the service. Anything thrown as an ApiError is rendered by http/render-error.ts
// as { error, code, field? } with its status; anything else becomes a logged 500 with no internals shown.

export type ErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'context_length_exceeded'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'headers_too_large'
  | 'request_timeout'
  | 'unknown_model'
  | 'unsupported_network'
  | 'network_mismatch'
  | 'payment_mismatch'
  | 'payment_id_conflict'
  | 'payer_not_allowed'
  | 'not_found'
  | 'method_not_allowed'
  | 'range_not_satisfiable'
  | 'payment_in_progress'
  | 'settlement_pending'
  | 'settlement_failed'
  | 'payment_attempts_exhausted'
  | 'upstream_error'
  | 'upstream_unavailable'
  | 'upstream_timeout'
  | 'storage_error'
  | 'ledger_unavailable'
  | 'server_busy'
  | 'unauthorized'
  | 'admin_disabled'
  | 'internal_error';

export interface ErrorBody {
  /** human-readable reason */
  error: string;
  /** stable machine-readable code */
  code: ErrorCode;
  /** the request field at fault, as a dotted path */
  field?: string;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;
  /** what a surface's error shape carries beside the message for a client's SDK to act on (Anthropic's error.details) */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options: { field?: string; headers?: Record<string, string>; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = status;
    this.code = code;
    this.field = options.field;
    this.headers = options.headers ?? {};
    this.details = options.details;
  }

  toBody(): ErrorBody {
    return { error: this.message, code: this.code, ...(this.field ? { field: this.field } : {}) };
  }
}
