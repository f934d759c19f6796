// Failure reasons of EVM exact (EIP-3009 transferWithAuthorization): the names x402 clients and facilitators use, in one place.

export const INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_AFTER = 'invalid_exact_evm_payload_authorization_valid_after';
export const INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALID_BEFORE = 'invalid_exact_evm_payload_authorization_valid_before';
export const INVALID_EXACT_EVM_PAYLOAD_AUTHORIZATION_VALUE = 'invalid_exact_evm_payload_authorization_value';
export const INVALID_EXACT_EVM_PAYLOAD_RECIPIENT_MISMATCH = 'invalid_exact_evm_payload_recipient_mismatch';
export const INVALID_EXACT_EVM_PAYLOAD_SIGNATURE = 'invalid_exact_evm_payload_signature';
