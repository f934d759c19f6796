// How deep a parsed JSON value nests, checked with a stack of its own: a value may nest deeper than the call stack
// goes, and whatever later serialises or walks it recursively (JSON.stringify overflows near 4,500 levels) would
// fail there instead, perhaps after the call was paid for.

/** how deep a request's JSON (its body, a tool call's arguments) may nest: far past any real one, far below the stack */
export const MAX_JSON_NESTING = 256;

/** What in `root` is out of bounds: nesting past `maxDepth`, or (with `protoKeys`) a key named __proto__. */
export interface JsonProblem {
  kind: 'too_deep' | 'proto_key';
  /** the top-level key (or index) it is under; undefined for the root itself */
  field: string | undefined;
}

export function jsonProblem(root: unknown, { maxDepth = MAX_JSON_NESTING, protoKeys = false } = {}): JsonProblem | undefined {
  const pending: [value: unknown, depth: number, field: string | undefined][] = [[root, 0, undefined]];
  while (pending.length > 0) {
    const [value, depth, field] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxDepth) return { kind: 'too_deep', field };
    if (protoKeys && Object.hasOwn(value, '__proto__')) return { kind: 'proto_key', field };
    for (const key in value) pending.push([(value as Record<string, unknown>)[key], depth + 1, field ?? key]);
  }
  return undefined;
}

/** true when `value` nests deeper than MAX_JSON_NESTING; a cheap test first: so deep a text is at least twice as long */
export function nestsTooDeep(value: unknown, textLength: number): boolean {
  return textLength > 2 * MAX_JSON_NESTING && jsonProblem(value)?.kind === 'too_deep';
}
