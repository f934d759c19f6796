// The official x402 facilitator for `batch-settlement` over HTTP: @x402/core's x402Facilitator with @x402/evm's
// batch-settlement facilitator scheme (a viem signer on a sandbox chain, and unless `delegated` is false a receiver
// authorizer key it signs claims and refunds with, which /supported advertises), served at /supported, /verify
// and /settle on 127.0.0.1.
// What our remote channel facilitator is tested against.
import { x402Facilitator } from '@x402/core/facilitator';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { officialEvmSigner } from './official-evm-signer.ts';
import { serveOfficialFacilitator } from './serve-official-facilitator.ts';

export interface OfficialChannelFacilitator {
  url: string;
  /** the receiverAuthorizer /supported lists (none when not delegated) */
  authorizer?: Address;
  /** the payload types of every /settle, in order */
  settled: string[];
  stop(): Promise<void>;
}

export async function startOfficialChannelFacilitator(options: { rpcUrl: string; chainId: number; privateKey: Hex; delegated?: boolean }): Promise<OfficialChannelFacilitator> {
  const signer = officialEvmSigner({ rpcUrl: options.rpcUrl, chainId: options.chainId, account: privateKeyToAccount(options.privateKey) });
  const authorizer = options.delegated === false ? undefined : privateKeyToAccount(generatePrivateKey());
  const facilitator = new x402Facilitator().register(`eip155:${options.chainId}`, new BatchSettlementEvmScheme(signer, authorizer));
  const settled: string[] = [];
  const served = await serveOfficialFacilitator(facilitator, ({ paymentPayload }) => settled.push(String(paymentPayload?.payload?.type)));
  return { ...served, ...(authorizer ? { authorizer: authorizer.address } : {}), settled };
}
