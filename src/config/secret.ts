// Secrets never live in the config: it names an environment variable, whose value is the secret, or whose
// `<NAME>_FILE` twin names a file holding it (Docker/Kubernetes secrets). One reader for every secret.
import { readFileSync } from 'node:fs';
import { ConfigError } from './load.ts';

type Env = Record<string, string | undefined>;

/** NAME (trimmed), else the trimmed contents of the file named by NAME_FILE, else undefined when neither is set. */
export function optionalSecret(env: Env, name: string): string | undefined {
  const direct = env[name]?.trim();
  if (direct) return direct;
  const file = env[`${name}_FILE`];
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`cannot read ${name}_FILE (${file}): ${(error as Error).message}`);
  }
}

/** Like optionalSecret, but a secret that is not set stops startup with a message naming both variables. */
export function readSecret(env: Env, name: string): string {
  const value = optionalSecret(env, name);
  if (value === undefined) throw new ConfigError(`secret ${name} is not set (set ${name} or ${name}_FILE)`);
  return value;
}
