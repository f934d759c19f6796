// A Solana chain as a paying process asks it about payments whose outcome it did not see (chain-outcomes.ts), at
// the confirmed commitment: whether a blockhash can still land a transaction, and which of an address's transactions
// carries a given signature. A transaction's id is its fee payer's signature, which the payer never sees, so the
// payer's own transactions are listed (getSignaturesForAddress, newest first, back to when the payment was signed)
// and those of the minutes it could have landed in are read (getTransaction) until one carries the payer's signature.
import { address, createSolanaRpc, type Blockhash, type Signature } from '@solana/kit';
import type { SvmChainReader } from './chain-outcomes.ts';

/** looked for from this long before the payment was signed: clocks differ, and blockTime is whole seconds */
const CLOCK_SLACK_MS = 60_000;
/**
 * and up to this long after: its blockhash, fetched before it was signed, lives 150 blocks (about a minute at 400 ms
 * a slot), so it landed well within this or never; the payer's later transactions are not read
 */
const LANDING_WINDOW_MS = 5 * 60_000;
const PAGE = 100;

export function svmChainReader(rpcUrl: string): SvmChainReader {
  const rpc = createSolanaRpc(rpcUrl);
  return {
    async isBlockhashValid(blockhash) {
      return (await rpc.isBlockhashValid(blockhash as Blockhash, { commitment: 'confirmed' }).send()).value;
    },
    async transactionSignedWith(owner, wanted, since) {
      let before: Signature | undefined;
      for (;;) {
        const page = await rpc.getSignaturesForAddress(address(owner), { commitment: 'confirmed', limit: PAGE, ...(before ? { before } : {}) }).send();
        for (const entry of page) {
          const landedAt = entry.blockTime === null ? undefined : Number(entry.blockTime) * 1000;
          if (landedAt !== undefined && landedAt > since + LANDING_WINDOW_MS) continue;
          if (landedAt !== undefined && landedAt < since - CLOCK_SLACK_MS) return undefined;
          const landed = await rpc.getTransaction(entry.signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
          if (landed?.transaction.signatures.some((signature) => signature === wanted)) return { failed: landed.meta?.err !== null && landed.meta?.err !== undefined };
        }
        if (page.length < PAGE) return undefined;
        before = page.at(-1)!.signature;
      }
    },
  };
}
