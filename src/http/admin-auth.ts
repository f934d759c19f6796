// Bearer-token guard of the operator API. The token comes from the environment variable the config names
// (adminTokenEnv, default ADMIN_TOKEN; or a file through ADMIN_TOKEN_FILE), is read once at startup, and is
// never logged or echoed. Comparison is constant-time: both sides are hashed to 32 bytes and compared with
// timingSafeEqual, so neither the content nor the length of the token leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.ts';
import { ConfigError, type Config } from '../config/load.ts';
import { optionalSecret } from '../config/secret.ts';

export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** The configured admin token, or undefined when none is (the admin API is then disabled). */
export function adminToken(config: Pick<Config, 'adminTokenEnv'>, env: Record<string, string | undefined> = process.env): string | undefined {
  const name = config.adminTokenEnv;
  const token = optionalSecret(env, name);
  if (token === undefined) return undefined;
  if (token.length < MIN_ADMIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
    throw new ConfigError(
      `${name} (or ${name}_FILE) must hold at least ${MIN_ADMIN_TOKEN_LENGTH} printable characters without spaces (e.g. openssl rand -hex 32)`,
    );
  }
  return token;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** 403 admin_disabled without a token; 401 with WWW-Authenticate unless `Authorization: Bearer <token>` matches. */
export function requireAdminToken(token: string | undefined): MiddlewareHandler {
  const expected = token === undefined ? undefined : digest(token);
  return async (c, next) => {
    if (!expected) {
      throw new ApiError(403, 'admin_disabled', 'the admin API is disabled on this instance: no admin token is configured');
    }
    const presented = /^Bearer +(\S+) *$/i.exec(c.req.header('Authorization') ?? '')?.[1];
    if (presented === undefined) {
      throw new ApiError(401, 'unauthorized', 'the admin API needs Authorization: Bearer <admin token>', {
        field: 'Authorization',
        headers: { 'WWW-Authenticate': 'Bearer realm="x402-ai-admin"' },
      });
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      throw new ApiError(401, 'unauthorized', 'the admin token is not valid', {
        field: 'Authorization',
        headers: { 'WWW-Authenticate': 'Bearer realm="x402-ai-admin", error="invalid_token"' },
      });
    }
    await next();
    c.header('Cache-Control', 'no-store');
  };
}
