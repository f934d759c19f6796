// The payment networks a live gateway takes money on: where payments go and who verifies and settles them.
import { z } from 'zod';
import { milliseconds } from './duration.ts';
import { NETWORK_NAMES } from '../../x402/networks.ts';

export const networkName = z.enum(NETWORK_NAMES);

const localFacilitator = z.object({
  type: z.literal('local'),
  rpcUrl: z.url(),
  /** name of the environment variable holding the settlement (EVM) or fee-payer (Solana) secret key */
  secretKeyEnv: z.string().min(1),
});
const remoteFacilitator = z.object({
  type: z.literal('remote'),
  url: z.url(),
  /** name of an environment variable whose value is sent as the Authorization header */
  authorizationEnv: z.string().optional(),
  timeoutMs: milliseconds().default(30_000),
  /**
   * payment channels: name of an environment variable holding an EVM key that is the channels' receiverAuthorizer
   * (it signs claims and refunds here, docs/channels.md); unset, that role is delegated to the facilitator's
   */
  receiverAuthorizerKeyEnv: z.string().min(1).optional(),
});

const networkConfig = z.object({
  payTo: z.string().min(1),
  /** defaults to the network's USDC */
  asset: z.string().optional(),
  /** EIP-712 domain of the asset (EVM); defaults to USDC's on that network */
  eip712: z.object({ name: z.string(), version: z.string() }).optional(),
  facilitator: z.discriminatedUnion('type', [localFacilitator, remoteFacilitator]),
  /**
   * the metered `upto` scheme beside `exact` (EVM only; payments/upto-offer.ts): "auto" offers it where it can be
   * paid (local: Permit2 and the upto proxy have code, checked at startup; remote: its /supported lists upto),
   * "on" insists (local: no code check; remote: startup stops unless /supported lists it), "off" never
   */
  upto: z.enum(['auto', 'on', 'off']).default('auto'),
  /**
   * payment channels, the x402 `batch-settlement` scheme, beside `exact` (EVM only;
   * docs/channels.md): "auto" offers them where the escrow and its deposit collectors have code (checked at
   * startup), "on" without that check, "off" never
   */
  channels: z.enum(['auto', 'on', 'off']).default('auto'),
  /**
   * the `auth-capture` scheme (Commerce Payments' escrow) beside `exact` (EVM with a local facilitator only;
   * docs/payments.md): "auto" offers it where the escrow and its ERC-3009 collector have code (checked at
   * startup), "on" stops startup without that code, "off" never
   */
  authCapture: z.enum(['auto', 'on', 'off']).default('auto'),
});
export type NetworkConfig = z.infer<typeof networkConfig>;

export const networkFields = {
  networks: z.partialRecord(networkName, networkConfig).default({}),
};
