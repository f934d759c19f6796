// What both command-line tools (x402-ai, x402-ai-admin) share: options parsed, a mistake's reason printed with
// exit code 2, --version, the gateway URL, and one way out for errors.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** A mistake in how the command was called: its reason printed first, then where the usage is; exit code 2. */
export class UsageError extends Error {}

/** A secret's file (a key, a token): one missing or unreadable is a usage error naming the file, never its content. */
export function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new UsageError(`cannot read ${what} from ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/** this package's version, as package.json states it */
export const packageVersion = (): string =>
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Parses the options (plus --version, which prints `<name> <version>` and exits 0). */
export function parseCommandLine<O extends ParseArgsOptionsConfig>(name: string, options: O) {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { ...options, version: { type: 'boolean' } } });
  } catch (error) {
    usageFailure(name, (error as Error).message);
  }
  if ((parsed.values as { version?: boolean }).version) {
    console.log(`${name} ${packageVersion()}`);
    process.exit(0);
  }
  return parsed;
}

/** --url, else X402_AI_URL, else the local default; no trailing slash. Anything but an http(s) URL is a usage error. */
export function gatewayUrl(flag: string | undefined): string {
  const text = (flag ?? process.env.X402_AI_URL ?? 'http://127.0.0.1:4021').replace(/\/+$/, '');
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`--url ${JSON.stringify(text)} is not an http(s) URL (e.g. http://127.0.0.1:4021)`);
  }
  return text;
}

/**
 * A usage mistake: the one-line reason, then a pointer to the usage (not the whole usage, which would push the
 * reason off a small terminal); exit 2.
 */
function usageFailure(name: string, reason: string): never {
  console.error(`${name}: ${reason}\n(${name} --help shows every command and option)`);
  process.exit(2);
}

/** Runs the command: a UsageError exits 2 with its reason; any other error exits with its code here, else 1. */
export function runCommand(
  name: string,
  run: () => Promise<void>,
  exitCodes: [new (...args: never[]) => Error, number][] = [],
): void {
  run().catch((error: unknown) => {
    if (error instanceof UsageError) usageFailure(name, error.message);
    console.error(`${name}: ${(error as Error).message}`);
    process.exit(exitCodes.find(([type]) => error instanceof type)?.[1] ?? 1);
  });
}
