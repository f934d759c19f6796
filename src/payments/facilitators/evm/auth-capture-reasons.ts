// Failure reasons of EVM auth-capture (an ERC-3009 ReceiveWithAuthorization into Commerce Payments' escrow), in one place.

export const INVALID_AUTH_CAPTURE_SCHEME = 'invalid_auth_capture_scheme';
export const INVALID_AUTH_CAPTURE_NETWORK = 'invalid_auth_capture_network';
export const INVALID_AUTH_CAPTURE_PAYLOAD = 'invalid_auth_capture_payload';
export const INVALID_AUTH_CAPTURE_COLLECTOR = 'invalid_auth_capture_collector';
export const INVALID_AUTH_CAPTURE_VALUE = 'invalid_auth_capture_value';
export const INVALID_AUTH_CAPTURE_VALID_AFTER = 'invalid_auth_capture_valid_after';
export const INVALID_AUTH_CAPTURE_VALID_BEFORE = 'invalid_auth_capture_valid_before';
/** the nonce is not the hash of our terms: the payer signed for another operator, amount, fee or escrow */
export const INVALID_AUTH_CAPTURE_TERMS = 'invalid_auth_capture_terms';
export const INVALID_AUTH_CAPTURE_SIGNATURE = 'invalid_auth_capture_signature';
export const AUTH_CAPTURE_SIMULATION_FAILED = 'auth_capture_simulation_failed';
export const AUTH_CAPTURE_TRANSACTION_FAILED = 'auth_capture_transaction_failed';
