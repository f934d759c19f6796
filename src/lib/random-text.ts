// Random identifiers and nonces, drawn from the CSPRNG a few KB at a time: one call per 4 KB instead of one per
// value (as node's randomUUID does). Each byte is handed out once. A chat id drawn with its own randomBytes(12) cost
// ~15 us of a chat call on the shared 2-core machine (1.9% of the gateway's CPU profile under load); from the pool
// it is a slice and an encoding.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let used = pool.length;

/** `bytes` fresh random bytes (at most 4096), encoded as `encoding`. */
export function randomText(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const text = pool.toString(encoding, used, used + bytes);
  used += bytes;
  return text;
}
