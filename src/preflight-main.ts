// `npm run preflight -- --config path/to/config.json`: checks a config against its chains, database, media
// store and upstreams before going live (src/preflight.ts), prints every finding, and exits 1 if any is
// fatal (0 when ready, 2 on a usage error). Secrets come from the environment as at startup.
import { parseArgs } from 'node:util';
import { formatFindings, preflight } from './preflight.ts';

const USAGE = 'usage: npm run preflight -- --config <config.json>   (secrets from the environment, as for npm start)';

let configFile: string | undefined;
try {
  const { values } = parseArgs({ options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  configFile = values.config ?? process.env.CONFIG_FILE;
  if (!configFile) throw new Error('--config is required (or CONFIG_FILE)');
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}

try {
  const { text, exitCode } = formatFindings(await preflight({ ...process.env, CONFIG_FILE: configFile }));
  console.log(text);
  process.exit(exitCode);
} catch (error) {
  console.error(`preflight failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  process.exit(1);
}
