// Turns viem errors from USDC calls into stable x402-style reasons, and tells a node's definite
// rejection apart from a transport failure (after which a broadcast may or may not have happened).
import { BaseError, ContractFunctionRevertedError, RpcRequestError } from 'viem';
import { INSUFFICIENT_FUNDS, SETTLEMENT_UNAVAILABLE } from '../../reasons.ts';
import { INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_AFTER, INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_BEFORE, INVALID_EXACT_EVM_PAYLOAD_SIGNATURE } from './exact-reasons.ts';

// FiatToken (and TestUSDC) revert strings -> x402 reason names; unknown strings fall through.
const REVERT_REASONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/exceeds balance/i, INSUFFICIENT_FUNDS],
  [/authorization is used or canceled/i, 'nonce_already_used'],
  [/authorization is not yet valid/i, INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_AFTER],
  [/authorization is expired/i, INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_BEFORE],
  [/invalid signature|ECRecover/i, INVALID_EXACT_EVM_PAYLOAD_SIGNATURE],
  [/blacklisted/i, 'payer_blacklisted'],
  [/paused/i, 'asset_paused'],
];

/** The revert string of a failed contract call, if the error carries one. */
export function revertString(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.reason) return reverted.reason;
  // eth_estimateGas / eth_sendRawTransaction errors carry the reason only in their message
  const match = /execution reverted:?\s*([^\n]*)/i.exec(error.details ?? error.shortMessage);
  return match?.[1]?.trim() || undefined;
}

/** A stable reason for a reverted (or would-revert) transferWithAuthorization. */
export function reasonForRevert(error: unknown, fallback: string): string {
  const text = revertString(error);
  if (text === undefined) return fallback;
  return REVERT_REASONS.find(([pattern]) => pattern.test(text))?.[1] ?? fallback;
}

/** True when the call reverted (as opposed to the RPC being unreachable or misbehaving). */
export function isRevert(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return (
    error.walk((e) => e instanceof ContractFunctionRevertedError) instanceof ContractFunctionRevertedError ||
    revertString(error) !== undefined
  );
}

/** True when the node answered with a JSON-RPC error: it received the request and refused it. */
export function isNodeRejection(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof RpcRequestError) instanceof RpcRequestError;
}

export function shortMessage(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  return error instanceof Error ? error.message : String(error);
}

/** The reason of an 'unavailable' settlement: what could not be reached, in one short line (no URL, no request body). */
export function settlementUnavailable(error: unknown): string {
  return `${SETTLEMENT_UNAVAILABLE}: ${shortMessage(error).split('\n')[0]!.slice(0, 120)}`;
}
