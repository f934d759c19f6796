// The Solana RPC client our facilitator uses: @solana/kit's RPC API over rpcFetch (node:http on the process's
// one keep-alive pool, as the EVM RPC and the upstream AI calls go) instead of kit's default transport (the
// global fetch). Bodies are read and written as kit's own HTTP transport does for Solana methods: integers
// become bigints (u64 lamports and amounts stay exact), and an HTTP failure is kit's transport error.
import {
  createSolanaRpcFromTransport,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SolanaError,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from '@solana/kit';
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from '@solana/rpc-spec-types';
import { rpcFetch } from '../rpc-fetch.ts';

export function createKeepAliveSolanaRpc(url: string): Rpc<SolanaRpcApi> {
  const transport: RpcTransport = async <TResponse>({ payload, signal }: Parameters<RpcTransport>[0]): Promise<TResponse> => {
    const response = await rpcFetch(url, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json; charset=utf-8' },
      body: stringifyJsonWithBigInts(payload),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) {
      throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, {
        headers: response.headers,
        message: response.statusText,
        statusCode: response.status,
      });
    }
    return parseJsonWithBigInts(await response.text()) as TResponse;
  };
  return createSolanaRpcFromTransport(transport);
}
