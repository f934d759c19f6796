// USDC amounts between people (decimal strings, "0.05") and the protocol (atomic units, 50000n), exactly.
export { formatUsdc, parseUsdc } from '../pricing/usdc.ts';
