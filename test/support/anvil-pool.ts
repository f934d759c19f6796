// JSON-RPC to a sandbox anvil for tests that reach past the service: its transaction pool (txpool_content),
// and the node's test methods (anvil_dropTransaction, evm_setAutomine, evm_mine).
import type { Address, Hex } from 'viem';

export type AnvilRpc = <T = unknown>(method: string, params?: unknown[]) => Promise<T>;

export function anvilRpc(rpcUrl: string): AnvilRpc {
  return async <T,>(method: string, params: unknown[] = []) => {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const answer = (await response.json()) as { result?: T; error?: { message: string } };
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result as T;
  };
}

export interface PooledTransaction {
  hash: Hex;
  to: Address;
  value: Hex;
  input: Hex;
}

/** The transactions of `from` the node holds, ready or waiting behind a nonce gap, by nonce. */
export async function pooledTransactions(rpc: AnvilRpc, from: Address): Promise<Map<number, PooledTransaction>> {
  const content = await rpc<Record<'pending' | 'queued', Record<string, Record<string, PooledTransaction>>>>('txpool_content');
  const byNonce = new Map<number, PooledTransaction>();
  for (const part of [content.pending, content.queued]) {
    const ours = Object.entries(part).find(([sender]) => sender.toLowerCase() === from.toLowerCase())?.[1] ?? {};
    for (const [nonce, held] of Object.entries(ours)) byNonce.set(Number(nonce), held);
  }
  return byNonce;
}
