// What of an error, or of a URL, may be written to a log: never a credential, a prompt or generated content.
//   - redactUrlSecrets: the logger runs every line through it (logging.ts). Hosted RPC and API URLs carry their
//     key as user:password@, in the query (?apikey=, ?api-key=, ?token=) or as a path segment (/v2/<key>), and
//     viem puts the whole URL (and the request body) in its error messages.
//   - describeError: an error as a log line holds it: its kind, the first line of its message, status and code,
//     along its causes. Never the error object: the AI SDK's errors carry the request body (the prompt) and the
//     upstream's answer, and an upstream's error message may quote the prompt, so the message of an upstream
//     error (the AI SDK's, named AI_*) and of everything it wraps is left out.

const REDACTED = '[redacted]';

/** A URL as it appears in text: scheme, then everything up to a space, a quote, a backslash (JSON escapes) or a bracket. */
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]{1,15}:\/\/)([^\s"'`<>\\]+)/gi;
/** query parameter names that hold a credential */
const SECRET_NAME = /key|token|secret|pass|auth|sig|credential|session/i;

/**
 * A path segment or query value that looks like a key: 16 or more letters, digits, '-' or '_', with both a
 * letter and a digit (a word or a route has no digits; an id does). Hex starting 0x (addresses, hashes) is public.
 */
function keyLike(text: string): boolean {
  return text.length >= 16 && /^[A-Za-z0-9_-]+$/.test(text) && /\d/.test(text) && /[A-Za-z]/.test(text) && !/^0x[0-9a-fA-F]+$/.test(text);
}

function redactUrl(scheme: string, rest: string): string {
  const authorityEnd = rest.search(/[/?#]/);
  let authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const tail = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  const at = authority.lastIndexOf('@');
  if (at >= 0) authority = `${REDACTED}@${authority.slice(at + 1)}`;
  const queryStart = tail.search(/[?#]/);
  const path = (queryStart < 0 ? tail : tail.slice(0, queryStart))
    .split('/')
    .map((segment) => (keyLike(segment) ? REDACTED : segment))
    .join('/');
  const query = (queryStart < 0 ? '' : tail.slice(queryStart)).replace(/([?&;#][^=&#;]*=)([^&#;]*)/g, (whole, name: string, value: string) =>
    SECRET_NAME.test(name) || keyLike(value) ? `${name}${REDACTED}` : whole,
  );
  return `${scheme}${authority}${path}${query}`;
}

/** `text` with the credentials of every URL in it replaced by "[redacted]"; the rest as it was. */
export function redactUrlSecrets(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (_whole, scheme: string, rest: string) => redactUrl(scheme, rest));
}

/** The first line of an error's message (at most 200 characters), its URLs' credentials redacted. */
export function errorSummary(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return redactUrlSecrets(text.split('\n')[0]!.slice(0, 200));
}

/** What a log line says of an error (see the top of this file). */
export function describeError(error: unknown, depth = 0, fromUpstream = false): Record<string, unknown> | string {
  if (!(error instanceof Error)) return typeof error === 'string' ? errorSummary(error) : typeof error;
  const { statusCode, code, lastError, cause } = error as { statusCode?: unknown; code?: unknown; lastError?: unknown; cause?: unknown };
  const upstream = fromUpstream || error.name.startsWith('AI_');
  const inner = lastError ?? cause;
  return {
    type: error.name,
    ...(upstream ? {} : { message: errorSummary(error) }),
    ...(typeof statusCode === 'number' ? { statusCode } : {}),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(inner !== undefined && depth < 3 ? { cause: describeError(inner, depth + 1, upstream) } : {}),
  };
}
