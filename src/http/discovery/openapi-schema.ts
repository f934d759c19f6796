// Helpers shared by the OpenAPI documents (openapi.ts, admin-openapi.ts): zod -> JSON Schema, and a
// JSON body that refers to a named component schema.
import { z } from 'zod';

/** `io: 'output'` describes what the service sends (objects closed to other keys); 'input' what it accepts. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

export const jsonContent = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } });
