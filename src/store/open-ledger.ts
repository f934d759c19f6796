// Picks the ledger engine from the config: PostgreSQL when a database URL is configured (several instances
// share it), else the embedded SQLite file under the data dir (one instance, no server to run).
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Ledger } from './ledger.ts';
import { SqliteLedger } from './sqlite-ledger.ts';
import { PostgresLedger } from './postgres-ledger.ts';

export type LedgerEngine = 'sqlite' | 'postgres';

export async function openLedger(
  config: { dataDir: string; databaseUrl?: string | undefined },
  log?: Logger,
): Promise<{ ledger: Ledger; engine: LedgerEngine }> {
  if (config.databaseUrl) {
    const ledger = await PostgresLedger.open({
      connectionString: config.databaseUrl,
      onIdleError: (error) => log?.warn({ err: error }, 'idle PostgreSQL connection failed; it will be replaced'),
    });
    return { ledger, engine: 'postgres' };
  }
  return { ledger: new SqliteLedger(join(config.dataDir, 'ledger.db')), engine: 'sqlite' };
}
