// USDC amounts between people (decimal strings, "0.05") and the protocol (atomic units, 50000n), exactly.

export function parseUsdc(text: string): bigint {
  const match = /^(\d+)(?:\.(\d{0,6}))?$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a USDC amount with at most 6 decimals (e.g. 0.05)`);
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
}

export function formatUsdc(atomic: bigint): string {
  const whole = atomic / 1_000_000n;
  const fraction = (atomic % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}
