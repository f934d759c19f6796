// Model fallback: when a model's upstream fails (502/503/504), the same request runs on the model's
// configured `fallback`, and on its fallback in turn, but only where the request is valid for that model
// and its quote is no higher than the price the client was quoted and paid. The 200 body names the model
// that answered. A failure of the last model tried is the error the client gets; nothing is charged.
import { ApiError } from '../errors.ts';
import type { Endpoint, EndpointContext, PreparedCall } from './endpoint.ts';

const UPSTREAM_FAILURES = new Set(['upstream_error', 'upstream_unavailable', 'upstream_timeout']);

export function withFallback(endpoint: Endpoint, body: unknown, context: EndpointContext, primary: PreparedCall): PreparedCall {
  if (!primary.model.fallback) return primary;
  return {
    ...primary,
    async run() {
      const tried = new Set<string>();
      for (let call: PreparedCall | undefined = primary; ; ) {
        tried.add(call.model.id);
        try {
          return await call.run();
        } catch (error) {
          const next: PreparedCall | undefined = isUpstreamFailure(error) ? nextModel(endpoint, body, context, call, tried, primary.amount) : undefined;
          if (!next) throw error;
          call = next;
        }
      }
    },
  };
}

function isUpstreamFailure(error: unknown): boolean {
  return error instanceof ApiError && UPSTREAM_FAILURES.has(error.code);
}

/** The failed model's fallback prepared for the same body, if it can serve it for no more than was paid. */
function nextModel(
  endpoint: Endpoint,
  body: unknown,
  context: EndpointContext,
  failed: PreparedCall,
  tried: ReadonlySet<string>,
  paid: bigint,
): PreparedCall | undefined {
  const id = failed.model.fallback;
  if (!id || tried.has(id)) return undefined;
  try {
    const next = endpoint.prepare({ ...(body as Record<string, unknown>), model: id }, context);
    return next.amount <= paid ? next : undefined;
  } catch {
    return undefined; // e.g. a size or voice the fallback does not offer
  }
}
