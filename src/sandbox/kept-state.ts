// What a sandbox chain keeps across restarts under the data dir (DATA_DIR/sandbox/, docs/sandbox.md): its keys
// (the operator's, the token's minter) in <network>.keys.json, readable by the owner only, beside the chain's own
// state file (anvil's state dump, litesvm's snapshot). Both there: the chain resumes with its balances and keys;
// either missing (the first start, or after a reset: the folder deleted): a fresh chain and fresh keys.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KeptFiles {
  /** the chain's state (anvil --state JSON, litesvm snapshot) */
  state: string;
  keys: string;
}

export function keptFiles(stateDir: string, network: string, stateExtension: string): KeptFiles {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  return { state: join(stateDir, `${network}.${stateExtension}`), keys: join(stateDir, `${network}.keys.json`) };
}

/** The keys kept with a chain's state, when both are there. */
export function readKeptKeys<T>(files: KeptFiles | undefined): T | undefined {
  if (!files || !existsSync(files.state) || !existsSync(files.keys)) return undefined;
  return JSON.parse(readFileSync(files.keys, 'utf8')) as T;
}

/** Writes the keys for the next start (owner-only, replaced whole). */
export function keepKeys(files: KeptFiles | undefined, keys: unknown): void {
  if (!files) return;
  const partial = `${files.keys}.partial`;
  writeFileSync(partial, JSON.stringify(keys, null, 2), { mode: 0o600 });
  chmodSync(partial, 0o600);
  renameSync(partial, files.keys);
}
