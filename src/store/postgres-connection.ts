// How the PostgreSQL ledger survives its server going away (a restart, a failover, a network cut):
//   - a connection checked out of the pool (a transaction: inTransaction; the nonce step that holds a row lock
//     through signing and broadcast) gets its own 'error' listener (holdClient; never a bare pool.connect()):
//     node-postgres emits 'error' on a client whose server ended the session (57P01 admin_shutdown on a
//     restart), and an unhandled 'error' event kills the process. A broken connection is destroyed on release, never handed out again;
//   - every failure that means "the database cannot be reached now" becomes one LedgerUnavailableError, which
//     the HTTP layer answers as 503 (retry later) and /readyz reports as the ledger being down.
// The pool itself reconnects on demand: the first query after the server is back opens a new connection.
import type pg from 'pg';
import { LedgerUnavailableError } from './ledger.ts';

/** SQLSTATE classes and codes of a server that is gone, going, not there yet, or read-only after a failover. */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-4]|53300|25006)$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** node-postgres says these in words, without a code */
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|not queryable|Client was closed|connection error/i;

/** Whether `error` says the database cannot be reached (rather than that a statement is wrong). */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof LedgerUnavailableError) return true;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

/** `error` as a LedgerUnavailableError when it is one of those; otherwise unchanged. */
export function asLedgerError(error: unknown): unknown {
  if (error instanceof LedgerUnavailableError || !isUnavailable(error)) return error;
  return new LedgerUnavailableError(error);
}

/** A client checked out of the pool, whose connection errors are caught and remembered instead of crashing the process. */
export interface HeldClient {
  client: pg.PoolClient;
  /** the connection's error, if it failed while held (its next query fails too) */
  readonly broken: Error | undefined;
  /** back to the pool; a broken connection is destroyed instead */
  release(): void;
}

export async function holdClient(pool: pg.Pool): Promise<HeldClient> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw asLedgerError(error);
  }
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  let released = false;
  return {
    client,
    get broken() {
      return broken;
    },
    release() {
      if (released) return;
      released = true;
      client.removeListener('error', onError);
      // pg-pool destroys a client released with an error rather than pooling it
      client.release(broken);
    },
  };
}

/**
 * Runs `work` in one transaction on a held connection (holdClient): committed when it resolves, rolled back when
 * it throws. A database that cannot be reached, before or during it, is a LedgerUnavailableError.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const held = await holdClient(pool);
  const { client } = held;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw asLedgerError(held.broken ?? error);
  } finally {
    held.release();
  }
}
