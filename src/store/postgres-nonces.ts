// Account nonces of a settlement key shared by several instances through the PostgreSQL ledger. The key's
// counter is a row of settlement_nonces; an instance's ordered step (nonce, sign, send) runs inside a
// transaction that holds that row's lock, so the instances sharing the key take turns and never sign the
// same nonce. Two round trips per step: the upsert that locks and reads the counter (with BEGIN), and the
// update with COMMIT. Within one instance the steps queue in memory first, so a burst waits on one
// connection instead of holding the whole pool. A NULL counter (a new key, or after an error) is read
// from the chain. If the instance dies mid-step the transaction rolls back: the counter is as before, and
// a transaction it may have sent makes the next one "nonce too low", which re-reads the chain. The same
// when the database goes away mid-step (a restart, a failover): see withNextNonce.
import type pg from 'pg';
import { asLedgerError, holdClient } from './postgres-connection.ts';
import { SerialQueue, useNonce, type NonceAllocator, type NonceUse, type PendingCount } from './nonce-allocator.ts';

export const SETTLEMENT_NONCES_MIGRATION = `CREATE TABLE settlement_nonces (
     chain_id bigint NOT NULL,
     address text NOT NULL,
     next_nonce bigint,
     PRIMARY KEY (chain_id, address)
   );`;

export class SharedNonces implements NonceAllocator {
  readonly #queue = new SerialQueue();
  readonly #pool: pg.Pool;
  readonly #key: [number, string];
  readonly #pendingCount: PendingCount;

  constructor(pool: pg.Pool, chainId: number, address: string, pendingCount: PendingCount) {
    this.#pool = pool;
    this.#key = [chainId, address.toLowerCase()];
    this.#pendingCount = pendingCount;
  }

  withNextNonce<T>(use: (nonce: number) => Promise<NonceUse<T>>): Promise<T> {
    return this.#queue.run(async () => {
      // the client's own 'error' listener: the database may go away while it is held through signing and
      // broadcast (a restart ends the session with 57P01), which must fail this step, not the process
      const held = await holdClient(this.#pool);
      const { client } = held;
      let outcome: { value: T; next: number | undefined };
      try {
        await client.query('BEGIN');
        // the upsert takes the row lock (held to COMMIT) whether the row is new or not
        const { rows } = await client.query<{ next_nonce: string | null }>(
          `INSERT INTO settlement_nonces (chain_id, address, next_nonce) VALUES ($1, $2, NULL)
           ON CONFLICT (chain_id, address) DO UPDATE SET next_nonce = settlement_nonces.next_nonce
           RETURNING next_nonce`,
          this.#key,
        );
        if (held.broken) throw held.broken; // the lock went with the session: nothing is sent without it
        const stored = rows[0]?.next_nonce ?? null;
        const nonce = stored === null ? await this.#pendingCount() : Number(stored);
        try {
          outcome = await useNonce(nonce, use, this.#pendingCount);
        } catch (error) {
          // unsure what happened: the chain decides next time
          await this.#store(client, undefined).catch(() => undefined);
          throw error;
        }
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        held.release();
        throw asLedgerError(error);
      }
      try {
        await this.#store(client, outcome.next);
      } catch {
        // The database went away after the transaction was sent: the counter rolls back to this step's nonce,
        // which the node now calls too low for the next step, and that step re-reads the chain's count.
        // What was sent stands and its caller watches it: its outcome is returned, never an error.
        await client.query('ROLLBACK').catch(() => undefined);
      } finally {
        held.release();
      }
      return outcome.value;
    });
  }

  async #store(client: pg.PoolClient, next: number | undefined): Promise<void> {
    await client.query('UPDATE settlement_nonces SET next_nonce = $3 WHERE chain_id = $1 AND address = $2', [...this.#key, next ?? null]);
    await client.query('COMMIT');
  }
}
