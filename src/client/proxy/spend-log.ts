// The spend file: what the buyer's key has signed and been charged, kept across restarts and shared by every
// process paying with it (`x402-ai proxy`, `x402-ai mcp`). One JSON record a line, appended, never rewritten; the
// file is the order of events. A process appends its hold first and then reads the file up to it: the caps are
// checked against everything written before that line, whichever process wrote it, so two processes cannot both
// pass a cap that only one payment fits (no lock needed). Readable and writable by its owner only (0600).
import { closeSync, fchmodSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * What can tell the outcome of a signed payment the payer did not see: the chain, the gateway's record of it, a
 * channel's next answer (chain-outcomes.ts, channel-lanes.ts). Numbers are decimal strings.
 */
export type OutcomeProof =
  | { type: 'erc3009'; network: string; token: `0x${string}`; from: `0x${string}`; nonce: `0x${string}`; value: string; validBefore: string }
  /**
   * `value`: what a used permit moved (`exact`'s amount); `upto`'s charge is not in the nonce: the gateway's public
   * record of the payment under `key` says what settled
   */
  | { type: 'permit2'; network: string; from: `0x${string}`; nonce: string; deadline: string; value?: string; key?: string }
  /**
   * a Solana transfer signed by `payer`: its transaction's id is the fee payer's signature, unknown to the payer, so
   * it is found among the payer's transactions since `at` (epoch ms, when it was signed) by its own `signature`; once
   * `blockhash` has expired, nothing more can land
   */
  | { type: 'svm'; network: string; payer: string; signature: string; blockhash: string; value: string; at: number }
  /** a channel's voucher: the gateway's state of the channel tells (channel-lanes.ts); `base`, what it had charged before */
  | { type: 'voucher'; network: string; channel: string; base: string };

/** One event of the spend file; amounts are USDC atomic units as decimal strings, times epoch milliseconds. */
export type SpendRecord =
  /** a payment signed for a call: its ceiling counts against the caps until its receipt says the charge */
  | { kind: 'hold'; id: string; at: number; amount: string; scheme: string; network: string; surface: string }
  /** what the call was charged (at most its hold), with what the account shows of it */
  | { kind: 'charged'; id: string; amount: string; model?: string; promptTokens?: number; completionTokens?: number }
  /** a hold or deposit that moved no money (the gateway refused the payment or failed the work) */
  | { kind: 'released'; id: string }
  /** a call whose outcome was not seen (its answer lost, its client gone first): what can tell it */
  | { kind: 'unknown'; id: string; proof: OutcomeProof }
  /** money moved into a payment channel's escrow (signed: counted from then on, released if never submitted) */
  | { kind: 'deposit'; id: string; at: number; amount: string; network: string; channel: string; salt: string }
  /** money the escrow returned from a channel */
  | { kind: 'refund'; at: number; amount: string; network: string; channel: string; transaction?: string }
  /** the payee and asset a gateway's network was first seen to ask for (or --pay-to pinned) */
  | { kind: 'payee'; gateway: string; network: string; payTo: string; asset: string }
  /** the caps the last proxy ran with, for `x402-ai spend` */
  | { kind: 'caps'; at: number; perCall?: string; total?: string; perHour?: string; perDay?: string };

/** The file is unreadable or cannot be written: no payment may be signed until it is fixed. */
export class SpendFileError extends Error {
  override name = 'SpendFileError';
}

/** Where the spend file lives unless --spend-file names another: the user's config directory. */
export function defaultSpendFile(env: NodeJS.ProcessEnv = process.env): string {
  const config =
    env.XDG_CONFIG_HOME ||
    (process.platform === 'win32' ? env.APPDATA || join(homedir(), 'AppData', 'Roaming') : process.platform === 'darwin' ? join(homedir(), 'Library', 'Application Support') : join(homedir(), '.config'));
  return join(config, 'x402-ai', 'spend.jsonl');
}

const NEWLINE = 0x0a;
/** bytes read at a time: a call's records are ~250 bytes */
const READ_SIZE = 64 * 1024;

export class SpendLog {
  readonly path: string;
  #fd: number;
  /** bytes of the file already read */
  #offset = 0;
  /** the start of a line another process is still writing */
  #partial: Buffer = Buffer.alloc(0);
  #lineNumber = 0;

  constructor(path: string) {
    this.path = path;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      this.#fd = openSync(path, 'a+', 0o600);
      // a file made by someone else's umask, or copied in, is made private before anything is written to it
      fchmodSync(this.#fd, 0o600);
    } catch (error) {
      throw new SpendFileError(`cannot open the spend file ${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Appends records as whole lines in one write (O_APPEND: they land at the end, whoever else appends). */
  append(...records: SpendRecord[]): void {
    const text = records.map((record) => `${JSON.stringify(record)}\n`).join('');
    try {
      writeSync(this.#fd, text);
    } catch (error) {
      throw new SpendFileError(`cannot write the spend file ${this.path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Reads what was appended since the last call (by any process), in file order: reads until the end, no stat. */
  catchUp(onRecord: (record: SpendRecord) => void): void {
    const chunks: Buffer[] = this.#partial.length ? [this.#partial] : [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_SIZE);
      let n: number;
      try {
        n = readSync(this.#fd, chunk, 0, READ_SIZE, this.#offset);
      } catch (error) {
        throw new SpendFileError(`cannot read the spend file ${this.path}: ${(error as Error).message}`, { cause: error });
      }
      if (n > 0) chunks.push(chunk.subarray(0, n));
      this.#offset += n;
      if (n < READ_SIZE) break;
    }
    if (chunks.length === 0) return;
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    let start = 0;
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
      this.#lineNumber++;
      const line = bytes.toString('utf8', start, end);
      start = end + 1;
      if (line.trim() === '') continue;
      onRecord(this.#parse(line));
    }
    this.#partial = Buffer.from(bytes.subarray(start));
  }

  close(): void {
    closeSync(this.#fd);
  }

  #parse(line: string): SpendRecord {
    try {
      const record = JSON.parse(line) as SpendRecord;
      if (typeof record === 'object' && record !== null && typeof record.kind === 'string') return record;
    } catch {
      // reported below
    }
    throw new SpendFileError(`the spend file ${this.path} has an unreadable line ${this.#lineNumber}: nothing is signed until it is repaired or moved away`);
  }
}
