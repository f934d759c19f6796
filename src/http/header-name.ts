// A header name in lower case, as node:http keys request headers and its response header table. The names the
// service passes are a few dozen constants, asked for on every request: each one lowered once and kept, so a
// request neither allocates a new string per name nor has V8 look the new string up in its string table to use
// it as a property key (~1 us per request on the unpaid 402 lane, in its perf profile). The memo is bounded: a
// name past it is lowered each time.
const MAX_NAMES = 256;
const lowered = new Map<string, string>();

export function lowerCaseName(name: string): string {
  let lower = lowered.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowered.size < MAX_NAMES) lowered.set(name, lower);
  }
  return lower;
}
