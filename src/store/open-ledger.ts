// Picks the ledger engine from the config: PostgreSQL when a database URL is configured (several instances
// share it), else the embedded SQLite file under the data dir (one instance, no server to run).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_RESERVATION_LEASE_MS, LedgerUnavailableError, type Ledger, type ReservationHolder } from './ledger.ts';
import { SqliteLedger } from './sqlite-ledger.ts';
import { ConfigError } from '../config/load.ts';

export type LedgerEngine = 'sqlite' | 'postgres';

export async function openLedger(
  config: { dataDir: string; databaseUrl?: string | undefined; reservationLeaseMs?: number },
  log?: Logger,
): Promise<{ ledger: Ledger; engine: LedgerEngine }> {
  // a new id per process: a restarted instance never mistakes its dead predecessor's reservations for its own
  const holder: ReservationHolder = { instanceId: randomUUID(), leaseMs: config.reservationLeaseMs ?? DEFAULT_RESERVATION_LEASE_MS };
  if (config.databaseUrl) {
    // pg is loaded only for a PostgreSQL ledger: a single SQLite instance never needs it
    const { PostgresLedger } = await import('./postgres-ledger.ts');
    const ledger = await PostgresLedger.open({
      holder,
      connectionString: config.databaseUrl,
      onIdleError: (error) => log?.warn({ err: error }, 'idle PostgreSQL connection failed; it will be replaced'),
    }).catch((error: unknown) => {
      throw new ConfigError(`cannot use the PostgreSQL ledger at ${databaseWhere(config.databaseUrl!)} (databaseUrl / DATABASE_URL): ${databaseReason(error)}`);
    });
    return { ledger, engine: 'postgres' };
  }
  return { ledger: new SqliteLedger(join(config.dataDir, 'ledger.db'), holder), engine: 'sqlite' };
}

/** host:port/database of a connection string: never its user or password. */
function databaseWhere(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the configured address';
  }
}

/** pg's reason, without anything of the connection string it might quote. */
function databaseReason(error: unknown): string {
  // pg's own error, also when the ledger wrapped it as unavailable
  const { code, message } = (error instanceof LedgerUnavailableError ? error.cause : error) as { code?: string; message?: string };
  if (code === 'ECONNREFUSED') return 'connection refused (is the server running and listening there?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name does not resolve';
  if (code === '28P01' || code === '28000') return 'the server refused the credentials';
  if (code === '3D000') return 'the database does not exist';
  if (typeof message === 'string' && /timeout/i.test(message)) return 'no answer in time (unreachable?)';
  return `the server could not be reached or refused the connection${code ? ` (${code})` : ''}`;
}
