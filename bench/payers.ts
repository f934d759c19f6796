// Who pays in a paid bench run: the network named in X-Network, and per buyer a proof signer. Each buyer is
// a fresh key funded by the gateway's sandbox faucet; proofs are signed by the official client code
// (bench/sign.ts). Signing is the client's cost: callers sign before the timed window.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { generateKeyPairSigner } from '@solana/kit';
import { jsonRequest, sendOnce } from './load.ts';
import { signProof, solanaProofSigner, type PaymentRequired } from './sign.ts';

export type ProofSigner = (required: PaymentRequired) => Promise<string>;

export interface Payer {
  network: string;
  /** a newly funded buyer's signer */
  buyer(origin: URL): Promise<ProofSigner>;
  /**
   * how many proofs may be signed ahead of use: a Solana proof names a recent blockhash, usable for ~60 s,
   * so those are signed and sent in batches; EVM proofs stay valid for the requirement's whole timeout
   */
  signAhead: number;
}

function request(origin: URL, method: string, path: string, body?: unknown) {
  return sendOnce(origin, body === undefined ? { method, path, headers: {} } : jsonRequest(path, body));
}

async function faucet(origin: URL, network: string, address: string): Promise<void> {
  const reply = await request(origin, 'POST', '/sandbox/faucet', { network, address });
  if (reply.status !== 200) throw new Error(`faucet (${network}) answered ${reply.status}: ${reply.body.toString()}`);
}

/** EVM (base by default): an EIP-3009 authorization per proof, as x402-fetch 1.x signs it. */
export function evmPayer(network = 'base'): Payer {
  return {
    network,
    signAhead: Infinity,
    async buyer(origin) {
      const account = privateKeyToAccount(generatePrivateKey());
      await faucet(origin, network, account.address);
      return (required) => signProof(account, required);
    },
  };
}

/** Solana: a partially signed transfer per proof, as @x402/fetch with @x402/svm's v1 scheme signs it, against
 *  the sandbox Solana RPC the gateway reports in /healthz. */
export function solanaPayer(network = 'solana', signAhead = 50): Payer {
  let rpcUrl: Promise<string> | undefined;
  const sandboxRpc = async (origin: URL) => {
    const health = JSON.parse((await request(origin, 'GET', '/healthz')).body.toString()) as {
      sandboxNetworks?: Record<string, { rpcUrl?: string }>;
    };
    const url = health.sandboxNetworks?.[network]?.rpcUrl;
    if (!url) throw new Error(`the gateway runs no sandbox ${network} chain (start it with BENCH_NETWORKS including ${network})`);
    return url;
  };
  return {
    network,
    signAhead,
    async buyer(origin) {
      rpcUrl ??= sandboxRpc(origin);
      const signer = await generateKeyPairSigner();
      await faucet(origin, network, signer.address);
      return solanaProofSigner(signer, network, await rpcUrl);
    },
  };
}
