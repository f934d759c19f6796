// The official x402 facilitator for `upto` over HTTP: @x402/core's x402Facilitator with @x402/evm's upto
// facilitator scheme (a viem signer on a sandbox chain) and the EIP-2612 gas-sponsoring extension, served at
// /supported, /verify and /settle on 127.0.0.1. What our remote facilitator client is tested against.
import { x402Facilitator } from '@x402/core/facilitator';
import { officialEvmSigner } from './official-evm-signer.ts';
import { serveOfficialFacilitator } from './serve-official-facilitator.ts';
import { UptoEvmScheme } from '@x402/evm/upto/facilitator';
import { EIP2612_GAS_SPONSORING } from '@x402/extensions';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export interface OfficialUptoFacilitator {
  url: string;
  /** the address payers' witnesses must name: the key that sends settlements */
  address: Address;
  /** every /settle request's paymentRequirements.amount, in order */
  settledAmounts: string[];
  stop(): Promise<void>;
}

export async function startOfficialUptoFacilitator(options: { rpcUrl: string; chainId: number; privateKey: Hex }): Promise<OfficialUptoFacilitator> {
  const account = privateKeyToAccount(options.privateKey);
  const signer = officialEvmSigner({ rpcUrl: options.rpcUrl, chainId: options.chainId, account });
  const facilitator = new x402Facilitator()
    .register(`eip155:${options.chainId}`, new UptoEvmScheme(signer))
    .registerExtension(EIP2612_GAS_SPONSORING);

  const settledAmounts: string[] = [];
  const served = await serveOfficialFacilitator(facilitator, ({ paymentRequirements }) => settledAmounts.push(paymentRequirements.amount));
  return { ...served, address: account.address, settledAmounts };
}
