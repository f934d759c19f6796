// The playground's browser script: browser/app.ts with the official x402 client code it imports
// (@x402/fetch, @x402/evm, viem), bundled by esbuild (a runtime dependency) on the first request and kept
// in memory. Nothing is fetched from outside and nothing is written to disk; esbuild is loaded only then,
// so a gateway that never serves the playground never loads it.
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./browser/app.ts', import.meta.url));

export async function bundlePlaygroundScript(): Promise<string> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'eof',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
