// The spec routes name fields as their bodies do (text, format, options.speed); a /v1 request that fails
// there gets the 400 naming its own field (input, response_format, speed).
import { ApiError } from '../../errors.ts';

export function withFieldNames<T>(names: Record<string, string>, prepare: () => T): T {
  try {
    return prepare();
  } catch (error) {
    const renamed = error instanceof ApiError && error.field ? names[error.field] : undefined;
    if (!renamed || !(error instanceof ApiError)) throw error;
    const message = error.message.startsWith(error.field!) ? `${renamed}${error.message.slice(error.field!.length)}` : error.message;
    throw new ApiError(error.status, error.code, message, { field: renamed, headers: error.headers, cause: error.cause });
  }
}
