// Header encoding: x402 headers carry standard base64 (with padding) of a JSON document.

export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** Returns the parsed JSON, or undefined when the value is not base64 of a JSON document. */
export function decodeHeader(value: string): unknown {
  const trimmed = value.trim();
  if (trimmed.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  try {
    return JSON.parse(Buffer.from(trimmed, 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
}
