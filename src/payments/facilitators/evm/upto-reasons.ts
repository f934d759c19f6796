// Failure reasons of EVM upto (Permit2 through the upto proxy): the names x402 clients and facilitators use, in one place.

export const INVALID_PERMIT2_RECIPIENT_MISMATCH = 'invalid_permit2_recipient_mismatch';
export const INVALID_PERMIT2_SIGNATURE = 'invalid_permit2_signature';
export const INVALID_PERMIT2_SPENDER = 'invalid_permit2_spender';
export const INVALID_UPTO_EVM_NETWORK_MISMATCH = 'invalid_upto_evm_network_mismatch';
export const INVALID_UPTO_EVM_PAYLOAD_SETTLEMENT_EXCEEDS_AMOUNT = 'invalid_upto_evm_payload_settlement_exceeds_amount';
export const INVALID_UPTO_EVM_SCHEME = 'invalid_upto_evm_scheme';
export const INVALID_UPTO_EVM_TRANSACTION_FAILED = 'invalid_upto_evm_transaction_failed';
export const PERMIT2_2612_AMOUNT_MISMATCH = 'permit2_2612_amount_mismatch';
export const PERMIT2_ALLOWANCE_REQUIRED = 'permit2_allowance_required';
export const PERMIT2_AMOUNT_MISMATCH = 'permit2_amount_mismatch';
export const PERMIT2_DEADLINE_EXPIRED = 'permit2_deadline_expired';
export const PERMIT2_INSUFFICIENT_BALANCE = 'permit2_insufficient_balance';
export const PERMIT2_INVALID_AMOUNT = 'permit2_invalid_amount';
export const PERMIT2_INVALID_DESTINATION = 'permit2_invalid_destination';
export const PERMIT2_INVALID_NONCE = 'permit2_invalid_nonce';
export const PERMIT2_INVALID_OWNER = 'permit2_invalid_owner';
export const PERMIT2_NOT_YET_VALID = 'permit2_not_yet_valid';
export const PERMIT2_PAYMENT_TOO_EARLY = 'permit2_payment_too_early';
export const PERMIT2_SIMULATION_FAILED = 'permit2_simulation_failed';
export const PERMIT2_TOKEN_MISMATCH = 'permit2_token_mismatch';
