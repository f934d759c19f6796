// A configured (non-sandbox) EVM network backed by a sandbox chain: its payTo, token and EIP-712 domain, and a
// local facilitator on its RPC with the settlement key in the environment variable `secretKeyEnv`. What tests of
// a live setup (several instances, a shared ledger, readiness) put under `networks.<name>`.
import type { EvmSandbox } from '../../src/sandbox/evm/evm-sandbox.ts';

export function localEvmNetwork(sandbox: EvmSandbox, secretKeyEnv: string) {
  return {
    payTo: sandbox.payTo,
    asset: sandbox.asset,
    eip712: sandbox.eip712,
    facilitator: { type: 'local', rpcUrl: sandbox.rpcUrl, secretKeyEnv },
  };
}
