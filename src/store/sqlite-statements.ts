// Prepared statements kept per SQL text: preparing parses and plans the SQL (tens of microseconds), more than
// running a one-row statement costs, and the ledger runs the same few statements on every paid call. The SQL
// texts are the stores' own (a small fixed set), never built from input.
import type { DatabaseSync, StatementSync } from 'node:sqlite';

export function preparedStatements(db: DatabaseSync): (sql: string) => StatementSync {
  const prepared = new Map<string, StatementSync>();
  return (sql) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
}
