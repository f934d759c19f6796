// A client's JSON Schema as the embedded engine follows it: read once (schema-shape.ts), its shortest answer, its
// grammar for a budget of bytes (shape-grammar.ts), and the final check (schema-validator.ts). Kept per schema
// text, refusals too: an agent sends the same tool definitions call after call, and an attacker's schema costs
// its reading once. What is kept is bounded by the subschemas it holds, not only by the number of schemas.
import { shapeOf, MAX_NESTING, MAX_SCHEMA_NODES, UnsupportedSchemaError, type NodeAllowance, type ShapedSchema } from './schema-shape.ts';
import { minimumBytes, schemaGrammar } from './shape-grammar.ts';
import { fitsSchema } from './schema-validator.ts';

export interface ClientSchema {
  schema: object;
  shaped: ShapedSchema;
  /** the shortest answer's size in bytes (Infinity: no answer can be written) */
  minBytes: number;
  /** the GBNF grammar of answers of at most `budget` bytes (undefined: none fits) */
  grammar(budget: number): { gbnf: string; maxBytes: number } | undefined;
  /** whether an answer (parsed JSON) fits the whole schema */
  fits(value: unknown): boolean;
}

/** subschemas held by the kept schemas, at most (a few agents' tool sets) */
const KEPT_NODES = 5 * MAX_SCHEMA_NODES;
const GRAMMARS_PER_SCHEMA = 8;

const kept = new Map<string, { nodes: number; result: ClientSchema | UnsupportedSchemaError }>();
let keptNodes = 0;

/** The schema as the engine follows it; throws UnsupportedSchemaError (too large, or not a schema). */
export function clientSchema(schema: object, allowance: NodeAllowance = { left: MAX_SCHEMA_NODES }): ClientSchema {
  const text = keyOf(schema);
  let entry = kept.get(text);
  if (entry) {
    kept.delete(text); // most recently used last
    kept.set(text, entry);
  } else {
    entry = read(schema, allowance.left);
    // a refusal for size when part of the allowance was spent by other schemas may not hold on its own
    if (entry.result instanceof UnsupportedSchemaError && allowance.left < MAX_SCHEMA_NODES) throw entry.result;
    while (kept.size > 0 && keptNodes + entry.nodes > KEPT_NODES) {
      const [oldest, old] = kept.entries().next().value!;
      kept.delete(oldest);
      keptNodes -= old.nodes;
    }
    kept.set(text, entry);
    keptNodes += entry.nodes;
  }
  // a kept schema counts toward the request's allowance as if read again
  allowance.left -= entry.nodes;
  if (entry.result instanceof UnsupportedSchemaError) throw entry.result;
  if (allowance.left < 0) throw new UnsupportedSchemaError('', `the schemas of this request hold more than ${MAX_SCHEMA_NODES} subschemas`);
  return entry.result;
}

/** the schema's text; one nested past the stack (thousands of levels) is refused as too deep */
function keyOf(schema: object): string {
  try {
    return JSON.stringify(schema);
  } catch (error) {
    if (error instanceof RangeError) throw new UnsupportedSchemaError('', `nested deeper than ${MAX_NESTING} levels`);
    throw error;
  }
}

function read(schema: object, left: number): { nodes: number; result: ClientSchema | UnsupportedSchemaError } {
  const allowance = { left };
  let shaped: ShapedSchema;
  try {
    shaped = shapeOf(schema, allowance);
  } catch (error) {
    if (!(error instanceof UnsupportedSchemaError)) throw error;
    return { nodes: left - Math.max(0, allowance.left), result: error };
  }
  const grammars = new Map<number, { gbnf: string; maxBytes: number } | undefined>();
  const result: ClientSchema = {
    schema,
    shaped,
    minBytes: minimumBytes(shaped),
    grammar(budget) {
      if (!grammars.has(budget)) {
        if (grammars.size >= GRAMMARS_PER_SCHEMA) grammars.delete(grammars.keys().next().value!);
        grammars.set(budget, schemaGrammar(shaped, budget));
      }
      return grammars.get(budget);
    },
    fits: (value) => fitsSchema(schema, value),
  };
  return { nodes: shaped.nodes, result };
}
