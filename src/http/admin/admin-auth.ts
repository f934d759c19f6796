// Bearer-token guard of the operator API. The token comes from the environment variable the config names
// (adminTokenEnv, default ADMIN_TOKEN; or a file through ADMIN_TOKEN_FILE), is read once at startup, and is
// never logged or echoed. Comparison is constant-time: both sides are hashed to 32 bytes and compared with
// timingSafeEqual, so neither the content nor the length of the token leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../errors.ts';
import { ConfigError, type Config } from '../../config/load.ts';
import { optionalSecret } from '../../config/secret.ts';

export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** The configured admin token, or undefined when none is (the admin API is then disabled). */
export function adminToken(config: Pick<Config, 'adminTokenEnv'>, env: Record<string, string | undefined> = process.env): string | undefined {
  return bearerToken(config.adminTokenEnv, env);
}

/** The token GET /metrics requires, or undefined when none is configured (the metrics are then open). */
export function metricsToken(config: Pick<Config, 'metricsTokenEnv'>, env: Record<string, string | undefined> = process.env): string | undefined {
  return bearerToken(config.metricsTokenEnv, env);
}

/** What is wrong with the operator's tokens (admin, metrics), each named; none when both are unset or good. */
export function operatorTokenProblems(config: Pick<Config, 'adminTokenEnv' | 'metricsTokenEnv'>, env: Record<string, string | undefined> = process.env): string[] {
  const problems: string[] = [];
  for (const name of [config.adminTokenEnv, config.metricsTokenEnv]) {
    try {
      bearerToken(name, env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error.message);
    }
  }
  return problems;
}

/** A bearer token from the variable `name` (or NAME_FILE), checked for length and characters; undefined if unset. */
function bearerToken(name: string, env: Record<string, string | undefined>): string | undefined {
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
  if (token === undefined) {
    return async () => {
      throw new ApiError(403, 'admin_disabled', 'the admin API is disabled on this instance: no admin token is configured');
    };
  }
  return requireBearer(token, { realm: 'x402-ai-admin', what: 'the admin API', tokenName: 'admin token' });
}

/** 401 with WWW-Authenticate unless `Authorization: Bearer <token>` matches; answers are never cached. */
export function requireBearer(token: string, names: { realm: string; what: string; tokenName: string }): MiddlewareHandler {
  const expected = digest(token);
  return async (c, next) => {
    const presented = /^Bearer +(\S+) *$/i.exec(c.req.header('Authorization') ?? '')?.[1];
    if (presented === undefined) {
      throw new ApiError(401, 'unauthorized', `${names.what} needs Authorization: Bearer <${names.tokenName}>`, {
        field: 'Authorization',
        headers: { 'WWW-Authenticate': `Bearer realm="${names.realm}"` },
      });
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      throw new ApiError(401, 'unauthorized', `the ${names.tokenName} is not valid`, {
        field: 'Authorization',
        headers: { 'WWW-Authenticate': `Bearer realm="${names.realm}", error="invalid_token"` },
      });
    }
    await next();
    c.header('Cache-Control', 'no-store');
  };
}
