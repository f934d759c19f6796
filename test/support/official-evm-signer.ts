// The official EVM facilitator signer on a sandbox chain, as the x402 facilitator examples build it: one viem
// wallet client extended with the public actions. The official peer of the bench (bench/official-peer.ts) and
// the official upto facilitator of the tests (official-upto-facilitator.ts) both sign through it.
import { toFacilitatorEvmSigner } from '@x402/evm';
import { createWalletClient, defineChain, http, publicActions, type PrivateKeyAccount } from 'viem';

export function officialEvmSigner(options: { rpcUrl: string; chainId: number; account: PrivateKeyAccount }) {
  const chain = defineChain({
    id: options.chainId,
    name: 'sandbox',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  const { account } = options;
  const client = createWalletClient({ account, chain, transport: http(options.rpcUrl) }).extend(publicActions);
  return toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    writeContract: (args) => client.writeContract(args as Parameters<typeof client.writeContract>[0]),
    sendTransaction: (args) => client.sendTransaction(args),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt({ ...args, pollingInterval: 10 }),
    getCode: (args) => client.getCode(args),
  });
}
