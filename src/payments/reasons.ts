// Failure reasons every scheme's facilitators share (settlement outcomes, wrong payloads): the names x402 clients
// and facilitators use, in one place. Each mechanism's own are beside it (facilitators/{evm,svm}/*-reasons.ts).

export const BLOCKHASH_EXPIRED = 'blockhash_expired';
export const DUPLICATE_SETTLEMENT = 'duplicate_settlement';
export const FACILITATOR_UNAVAILABLE = 'facilitator_unavailable';
export const INSUFFICIENT_FUNDS = 'insufficient_funds';
export const INVALID_NETWORK = 'invalid_network';
export const INVALID_PAYLOAD = 'invalid_payload';
export const INVALID_PAYMENT_REQUIREMENTS = 'invalid_payment_requirements';
export const INVALID_SCHEME = 'invalid_scheme';
export const INVALID_TRANSACTION_STATE = 'invalid_transaction_state';
/** a settlement that could not be attempted (see SettleOutcome 'unavailable'); a deferred one's ledger error starts with it */
export const SETTLEMENT_DEFERRED = 'settlement_deferred';
export const SETTLEMENT_CONFIRMATION_TIMEOUT = 'settlement_confirmation_timeout';
export const SETTLEMENT_PENDING = 'settlement_pending';
export const SETTLEMENT_RECEIPT_TIMEOUT = 'settlement_receipt_timeout';
export const SETTLEMENT_RECEIPT_UNAVAILABLE = 'settlement_receipt_unavailable';
export const SETTLEMENT_REJECTED = 'settlement_rejected';
export const SETTLEMENT_REJECTED_BY_FACILITATOR = 'settlement_rejected_by_facilitator';
export const SETTLEMENT_REPLACED = 'settlement_replaced';
export const SETTLEMENT_UNAVAILABLE = 'settlement_unavailable';
export const TRANSACTION_SIMULATION_FAILED = 'transaction_simulation_failed';
/** a facilitator's verification failed for want of its chain (the official facilitator's name): no verdict */
export const UNEXPECTED_VERIFY_ERROR = 'unexpected_verify_error';
export const UNSUPPORTED_PAYLOAD_TYPE = 'unsupported_payload_type';
