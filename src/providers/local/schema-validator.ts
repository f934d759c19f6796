// Checks a value against a client's JSON Schema with Ajv (the reference validator): the embedded engine
// validates every constrained answer before it leaves, so a grammar bug can never hand out a wrong shape.
// Compiled validators are kept per schema text (a client sends the same tool definitions call after call).
// Ajv (CommonJS) is required at the first schema, not at startup: a gateway serving no schema never loads it.
import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';

let ajvInstance: AjvClass | undefined;
function ajv(): AjvClass {
  if (!ajvInstance) {
    const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    ajvInstance = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  }
  return ajvInstance;
}
const compiled = new Map<string, ValidateFunction>();
const KEPT = 200;

/** A function telling whether a value fits `schema`; throws when the schema itself is not valid JSON Schema. */
export function schemaValidator(schema: object): (value: unknown) => boolean {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    // the dialect named by $schema (draft-07, 2020-12 as zod writes it) is not looked up: the keywords the engine
    // accepts (bounded-json-schema.ts) mean the same in every draft since 7
    const { $schema: _dialect, ...body } = schema as Record<string, unknown>;
    validate = ajv().compile(body);
    if (compiled.size >= KEPT) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  const check = validate;
  return (value) => check(value) === true;
}
