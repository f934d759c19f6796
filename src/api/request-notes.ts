// What a surface tells the client about its request besides the answer: the fields it accepted and did not use
// (X-Ignored-Fields) and the values it lowered to what the model allows (X-Clamped-Fields), on every answer to
// the call (the 402 quote included, so a client sees before paying what its money buys). docs/agent-chat.md.

export const IGNORED_FIELDS_HEADER = 'X-Ignored-Fields';
export const CLAMPED_FIELDS_HEADER = 'X-Clamped-Fields';

/** at most this many fields are listed (a client's body may repeat an unknown key a thousand times) */
const MAX_LISTED = 40;
/** characters of one field path kept */
const MAX_PATH_CHARS = 120;

export class RequestNotes {
  private readonly ignored = new Set<string>();
  private readonly clamped = new Map<string, number>();

  /**
   * `path` was accepted and not used. Array indexes are written `*` (dots) or `[]` (brackets), so a key ignored
   * in every message is listed once.
   */
  ignore(path: string): void {
    if (this.ignored.size < MAX_LISTED) this.ignored.add(headerSafe(path.replace(/\.\d+(?=\.|$)/g, '.*').replace(/\[\d+\]/g, '[]')));
  }

  /** `field` asked for more than the model allows and was lowered to `value` */
  clamp(field: string, value: number): void {
    this.clamped.set(headerSafe(field), value);
  }

  get ignoredFields(): readonly string[] {
    return [...this.ignored];
  }

  get clampedFields(): ReadonlyMap<string, number> {
    return this.clamped;
  }

  /** the headers that say it; none when the request was taken as sent */
  headers(): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.ignored.size > 0) headers[IGNORED_FIELDS_HEADER] = [...this.ignored].join(', ');
    if (this.clamped.size > 0) headers[CLAMPED_FIELDS_HEADER] = [...this.clamped].map(([field, value]) => `${field}=${value}`).join(', ');
    return headers;
  }
}

/** a field path as a header may carry it: printable ASCII, no commas, bounded */
function headerSafe(path: string): string {
  return path.replace(/[^\x21-\x7E]|,/g, '?').slice(0, MAX_PATH_CHARS);
}
