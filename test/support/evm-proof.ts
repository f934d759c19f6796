// Signs an x402 v1 "exact" EVM proof the way the official clients do (EIP-3009 TransferWithAuthorization
// as EIP-712 typed data), with any one field overridable so tests can tamper with it.
import { randomBytes } from 'node:crypto';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { PaymentRequirements } from '../../src/x402/types.ts';
import { transferWithAuthorizationTypes } from '../../src/payments/facilitators/evm/eip3009-abi.ts';

export interface ProofOverrides {
  to?: `0x${string}`;
  value?: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: `0x${string}`;
  chainId?: number;
  verifyingContract?: `0x${string}`;
  /** signs with this account while claiming `from` = the buyer */
  signer?: PrivateKeyAccount;
  network?: string;
  scheme?: string;
  x402Version?: number;
}

export async function signEvmProof(
  buyer: PrivateKeyAccount,
  requirement: PaymentRequirements,
  chainId: number,
  overrides: ProofOverrides = {},
): Promise<string> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: buyer.address,
    to: overrides.to ?? (requirement.payTo as `0x${string}`),
    value: overrides.value ?? BigInt(requirement.maxAmountRequired),
    validAfter: overrides.validAfter ?? now - 600n,
    validBefore: overrides.validBefore ?? now + BigInt(requirement.maxTimeoutSeconds),
    nonce: overrides.nonce ?? (`0x${randomBytes(32).toString('hex')}` as `0x${string}`),
  };
  const extra = requirement.extra as { name: string; version: string };
  const signature = await (overrides.signer ?? buyer).signTypedData({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId: overrides.chainId ?? chainId,
      verifyingContract: overrides.verifyingContract ?? (requirement.asset as `0x${string}`),
    },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const payment = {
    x402Version: overrides.x402Version ?? 1,
    scheme: overrides.scheme ?? 'exact',
    network: overrides.network ?? requirement.network,
    payload: {
      signature,
      authorization: Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, String(v)])),
    },
  };
  return Buffer.from(JSON.stringify(payment)).toString('base64');
}
