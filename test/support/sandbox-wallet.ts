// A buyer in the sandbox: a fresh key funded through the service's own faucet, its paying fetch, and on-chain
// balance reads.
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { KeyPairSigner } from '@solana/kit';
import { postJson } from './service.ts';
import { generateSolanaSecretKey, solanaSigner } from '../../src/client/solana-key.ts';
import type { RunningService } from '../../src/service.ts';
import type { NetworkName } from '../../src/x402/networks.ts';
import { decodeHeader as decodeX402Header } from '../../src/x402/encoding.ts';

/** `fetch` paying every 402 with the official @x402/fetch client and its EVM `exact` scheme, signed by `buyer`. */
export function exactPayingFetch(buyer: PrivateKeyAccount): typeof fetch {
  return wrapFetchWithPayment(fetch, registerExactEvmScheme(new x402Client(), { signer: buyer }));
}

/** exactPayingFetch, keeping what each paid answer says it charged (X-Payment-Amount), in order. */
export function chargedPayingFetch(buyer: PrivateKeyAccount): { fetch: typeof fetch; charged: bigint[] } {
  const pay = exactPayingFetch(buyer);
  const charged: bigint[] = [];
  return {
    charged,
    fetch: async (input, init) => {
      const response = await pay(input, init);
      const amount = response.headers.get('x-payment-amount');
      if (response.ok && amount) charged.push(BigInt(amount));
      return response;
    },
  };
}

export async function fundedEvmBuyer(service: RunningService, networks: NetworkName[], amount = 10_000_000n): Promise<PrivateKeyAccount> {
  return (await fundedEvmBuyerKey(service, networks, amount)).account;
}

export async function fundedEvmBuyerKey(
  service: RunningService,
  networks: NetworkName[],
  amount = 10_000_000n,
): Promise<{ key: `0x${string}`; address: `0x${string}`; account: PrivateKeyAccount }> {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  await fund(service, networks, account.address, amount);
  return { key, address: account.address, account };
}

/** Test USDC (and gas) from the sandbox faucet to `address` on each network. */
async function fund(service: RunningService, networks: NetworkName[], address: string, amount: bigint): Promise<void> {
  for (const network of networks) {
    const response = await postJson(`${service.url}/sandbox/faucet`, { network, address, amount: amount.toString() });
    if (response.status !== 200) throw new Error(`faucet answered ${response.status}: ${await response.text()}`);
  }
}

/** A fresh Solana buyer (64-byte secret key and its address) funded with test USDC on each network. */
export async function fundedSolanaBuyerKey(
  service: RunningService,
  networks: NetworkName[],
  amount = 10_000_000n,
): Promise<{ secretKey: Uint8Array; address: string }> {
  const secretKey = generateSolanaSecretKey();
  const { address } = await solanaSigner(secretKey);
  await fund(service, networks, address, amount);
  return { secretKey, address };
}

/** A fresh funded Solana buyer as the official x402 clients take it: a kit key-pair signer. */
export async function fundedSolanaBuyer(service: RunningService, networks: NetworkName[], amount = 10_000_000n): Promise<KeyPairSigner> {
  return solanaSigner((await fundedSolanaBuyerKey(service, networks, amount)).secretKey);
}

export function balanceOf(service: RunningService, network: NetworkName, address: string): Promise<bigint> {
  const chain = service.sandbox?.chains.get(network);
  if (!chain) throw new Error(`${network} is not a sandbox network`);
  return chain.balanceOf(address);
}

/** A base64 JSON header (PAYMENT-REQUIRED, PAYMENT-RESPONSE) read back; fails the test when it is missing. */
export function decodeHeader(header: string | null): any {
  const value = header === null ? undefined : decodeX402Header(header);
  if (value === undefined) throw new Error(header === null ? 'header missing' : `not base64 of JSON: ${header.slice(0, 80)}`);
  return value;
}

export function decodeReceipt(header: string | null): { success: boolean; transaction: string; network: string; payer: string } {
  if (!header) throw new Error('no X-PAYMENT-RESPONSE header');
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
}
