// The package's client face: pay the gateway from code.
export { createClient, type ClientOptions, type GatewayClient, type Paid, type PaymentLookup, type PaymentStep, type Receipt } from './create-client.ts';
export { GatewayError, MaxPriceExceededError, NetworkNotOfferedError, OfferRefusedError, UnreachableError } from './errors.ts';
export { MAX_VALIDITY_SECONDS } from './offer-terms.ts';
export { formatUsdc, parseUsdc } from './usdc.ts';
export { generateSolanaSecretKey, solanaSecretKeyBytes, solanaSigner, type SolanaSecretKey } from './solana-key.ts';
export { SOLANA_NETWORKS, isSolanaNetwork } from './solana-rpc.ts';
export { callPaidTool, mcpPayer, mcpSignIn, paymentRequiredOf, type PaidToolOptions, type PaidToolResult, type ToolCaller } from './mcp.ts';
export { paidMcpFetch, type McpPaymentOptions } from './mcp-fetch.ts';
