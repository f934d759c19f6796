// One paid call on a sandbox EVM network, the way a buyer makes it: quote (402), sign the requirement with
// signEvmProof, send it again with X-PAYMENT. Returns what the ledger should then hold.
import type { PrivateKeyAccount } from 'viem/accounts';
import { postJson } from './service.ts';
import { signEvmProof } from './evm-proof.ts';
import { decodeReceipt } from './sandbox-wallet.ts';
import { NETWORKS, type EvmNetwork, type NetworkName } from '../../src/x402/networks.ts';
import type { PaymentRequirements } from '../../src/x402/types.ts';

export interface PaidCallResult {
  transaction: string;
  /** what was paid, atomic units */
  amount: string;
  /** the model that answered (the 200 body's `model`) */
  model: string;
  payer: string;
}

export async function quoteFor(url: string, body: unknown, network: NetworkName = 'base'): Promise<PaymentRequirements> {
  const quote = await postJson(url, body, { 'X-Network': network });
  if (quote.status !== 402) throw new Error(`expected a 402 quote, got ${quote.status}: ${await quote.text()}`);
  return ((await quote.json()) as { accepts: PaymentRequirements[] }).accepts[0]!;
}

export async function payEvm(url: string, body: unknown, buyer: PrivateKeyAccount, network: NetworkName = 'base'): Promise<PaidCallResult> {
  const requirement = await quoteFor(url, body, network);
  const proof = await signEvmProof(buyer, requirement, (NETWORKS[network] as EvmNetwork).chainId);
  const response = await postJson(url, body, { 'X-Network': network, 'X-PAYMENT': proof });
  if (response.status !== 200) throw new Error(`paid call answered ${response.status}: ${await response.text()}`);
  const result = (await response.json()) as { model: string };
  const receipt = decodeReceipt(response.headers.get('x-payment-response'));
  return { transaction: receipt.transaction, amount: requirement.maxAmountRequired, model: result.model, payer: receipt.payer };
}
