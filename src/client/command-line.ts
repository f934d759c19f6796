// What both command-line tools (x402-ai, x402-ai-admin) share: options parsed with the usage printed and
// exit code 2 on a mistake, the gateway URL, and one way out for errors.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}

export function parseCommandLine<O extends ParseArgsOptionsConfig>(options: O, usage: string) {
  try {
    return parseArgs({ allowPositionals: true, options });
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
}

/** --url, else X402_AI_URL, else the local default; no trailing slash */
export const gatewayUrl = (flag: string | undefined): string =>
  (flag ?? process.env.X402_AI_URL ?? 'http://127.0.0.1:4021').replace(/\/+$/, '');

/** Runs the command: a UsageError exits 2 with the usage; any other error exits with its code here, else 1. */
export function runCommand(
  name: string,
  usage: string,
  run: () => Promise<void>,
  exitCodes: [new (...args: never[]) => Error, number][] = [],
): void {
  run().catch((error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n${usage}`);
      process.exit(2);
    }
    console.error(`${name}: ${(error as Error).message}`);
    process.exit(exitCodes.find(([type]) => error instanceof type)?.[1] ?? 1);
  });
}
