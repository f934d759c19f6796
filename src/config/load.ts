// Builds the config object: defaults <- optional JSON file (CONFIG_FILE) <- environment variables.
// Secrets never live here: the config only names the environment variables that hold them.
import { readFileSync } from 'node:fs';
import { SANDBOX_NETWORK_NAMES, configSchema, type ModelConfig, type ParsedConfig } from './schema.ts';
import { embeddedModels } from './embedded-models.ts';
import { LOCAL_OPTION_SCHEMAS, speechProviderFormats } from './engines.ts';
import { NETWORKS, type NetworkName } from '../x402/networks.ts';
import { addressProblem } from './addresses.ts';

export interface Config extends Omit<ParsedConfig, 'sandbox' | 'models'> {
  sandbox: { enabled: boolean; networks: NetworkName[]; host: string; portBase?: number; publicHost?: string; keepState: boolean };
  models: ModelConfig[];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Settings found wrong together: one message naming each, so an operator fixes them all in one go. */
export class InvalidConfigurationError extends ConfigError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

/** A whole number from the environment; anything else stays text so the schema names it. */
const envNumber = (text: string): unknown => (/^\d+$/.test(text.trim()) ? Number(text) : text);

/** Environment variables that override single settings (sandbox ones merged into the file's `sandbox`). */
function fromEnvironment(env: Env, file: Record<string, unknown>): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  if (env.HOST) overrides.host = env.HOST;
  if (env.PORT) overrides.port = envNumber(env.PORT);
  if (env.PUBLIC_URL) overrides.publicUrl = env.PUBLIC_URL;
  if (env.TRUSTED_PROXIES) overrides.trustedProxies = env.TRUSTED_PROXIES.split(',').map((s) => s.trim()).filter(Boolean);
  if (env.DATA_DIR) overrides.dataDir = env.DATA_DIR;
  if (env.DATABASE_URL) overrides.databaseUrl = env.DATABASE_URL;
  if (env.LOG_LEVEL) overrides.logLevel = env.LOG_LEVEL;
  if (env.LOG_FORMAT) overrides.logFormat = env.LOG_FORMAT;
  const fileSandbox = typeof file.sandbox === 'object' && file.sandbox !== null ? (file.sandbox as Record<string, unknown>) : {};
  const sandbox: Record<string, unknown> = {};
  if (env.SANDBOX_NETWORKS) Object.assign(sandbox, { enabled: true, networks: env.SANDBOX_NETWORKS.split(',').map((s) => s.trim()) });
  if (env.SANDBOX_HOST) sandbox.host = env.SANDBOX_HOST.trim();
  if (env.SANDBOX_PORT_BASE) sandbox.portBase = envNumber(env.SANDBOX_PORT_BASE);
  if (env.SANDBOX_PUBLIC_HOST) sandbox.publicHost = env.SANDBOX_PUBLIC_HOST.trim();
  if (env.SANDBOX_KEEP_STATE) sandbox.keepState = !/^(0|false|no|off)$/i.test(env.SANDBOX_KEEP_STATE.trim());
  if (Object.keys(sandbox).length > 0) overrides.sandbox = { ...fileSandbox, ...sandbox };
  if (env.SANDBOX === 'false') overrides.sandbox = { enabled: false };
  const tracing = tracingFromEnvironment(env);
  if (tracing) overrides.tracing = tracing;
  return overrides;
}

/**
 * OpenTelemetry's own variables for tracing: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces URL as is), else
 * OTEL_EXPORTER_OTLP_ENDPOINT (a base URL: /v1/traces is appended), OTEL_SERVICE_NAME; OTEL_SDK_DISABLED=true
 * or OTEL_TRACES_EXPORTER=none turn tracing off whatever the config file says.
 */
function tracingFromEnvironment(env: Env): Record<string, unknown> | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') {
    return { endpoint: undefined, ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}) };
  }
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!endpoint && !env.OTEL_SERVICE_NAME) return undefined;
  return { ...(endpoint ? { endpoint } : {}), ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}) };
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The config, or one ConfigError naming every bad setting at once (schema, addresses, rails, catalog), so an
 * operator fixes them in one go rather than one restart per mistake.
 */
export function loadConfig(env: Env = process.env, input?: Record<string, unknown>): Config {
  const fileInput = input ?? (env.CONFIG_FILE ? readConfigFile(env.CONFIG_FILE) : {});
  const overrides = fromEnvironment(env, fileInput);
  const merged = { ...fileInput, ...overrides };
  // the OTEL_* variables override single tracing settings, not the file's whole tracing block
  if (overrides.tracing) merged.tracing = { ...(fileInput.tracing as Record<string, unknown> | undefined), ...(overrides.tracing as Record<string, unknown>) };
  const problems = [...networkProblems(merged.networks), ...railMixProblems(merged, env)];
  const parsed = configSchema.safeParse(merged);
  let config: Config | undefined;
  if (parsed.success) {
    config = resolve(parsed.data);
    problems.push(...modelProblems(config));
    const largestBody = Math.max(config.bodyLimitBytes, config.chatBodyLimitBytes);
    if (config.bodyMemoryLimitBytes < largestBody) {
      problems.push(`bodyMemoryLimitBytes (${config.bodyMemoryLimitBytes}) is below the largest body a route takes (bodyLimitBytes ${config.bodyLimitBytes}, chatBodyLimitBytes ${config.chatBodyLimitBytes}): such a body could never be read`);
    }
    if (!config.sandbox.enabled && Object.keys(config.networks).length === 0) {
      problems.push('no payment network: configure `networks`, or leave sandbox mode on');
    }
  } else {
    problems.unshift(...parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(top level)'}: ${issue.message}`));
  }
  if (problems.length > 0 || !config) {
    throw new InvalidConfigurationError(problems);
  }
  return config;
}

function resolve(parsed: ParsedConfig): Config {
  const hasRealNetworks = Object.keys(parsed.networks).length > 0;
  const sandbox = {
    enabled: parsed.sandbox?.enabled ?? !hasRealNetworks,
    networks: parsed.sandbox?.networks ?? [...SANDBOX_NETWORK_NAMES],
    host: parsed.sandbox?.host ?? '127.0.0.1',
    keepState: parsed.sandbox?.keepState ?? true,
    ...(parsed.sandbox?.portBase === undefined ? {} : { portBase: parsed.sandbox.portBase }),
    ...(parsed.sandbox?.publicHost === undefined ? {} : { publicHost: parsed.sandbox.publicHost }),
  };
  return { ...parsed, sandbox, models: parsed.models ?? embeddedModels() };
}

/** Each configured network's payTo and asset must be an address of its chain family (read from the raw input). */
function networkProblems(networks: unknown): string[] {
  if (typeof networks !== 'object' || networks === null) return [];
  const problems: string[] = [];
  for (const [name, settings] of Object.entries(networks)) {
    const network = NETWORKS[name as NetworkName];
    if (!network || typeof settings !== 'object' || settings === null) continue; // the schema names these
    const { payTo, asset, upto, authCapture } = settings as { payTo?: unknown; asset?: unknown; upto?: unknown; authCapture?: unknown };
    if (upto === 'on' && network.family !== 'evm') problems.push(`networks.${name}.upto "on": upto is offered on EVM networks only`);
    if (authCapture === 'on' && network.family !== 'evm') problems.push(`networks.${name}.authCapture "on": auth-capture is offered on EVM networks only`);
    const payToProblem = addressProblem(network.family, payTo);
    if (payToProblem) problems.push(`networks.${name}.payTo ${payToProblem}`);
    const assetProblem = asset === undefined ? undefined : addressProblem(network.family, asset);
    if (assetProblem) problems.push(`networks.${name}.asset ${assetProblem}`);
  }
  return problems;
}

/** Test-money chains (and their public faucet) never run in the same process as live rails. */
function railMixProblems(merged: Record<string, unknown>, env: Env): string[] {
  const networks = merged.networks;
  const live = typeof networks === 'object' && networks !== null ? Object.keys(networks) : [];
  const sandbox = merged.sandbox as { enabled?: unknown } | undefined;
  if (live.length === 0 || sandbox?.enabled !== true) return [];
  const setting = env.SANDBOX_NETWORKS ? 'SANDBOX_NETWORKS' : 'sandbox.enabled';
  return [
    `${setting} turns on sandbox chains (test USDC, a public faucet) but \`networks\` configures live rails (${live.join(', ')}): ` +
      'sandbox and live rails never run in one process; remove one of the two settings',
  ];
}

/** Cross-field rules of the catalog zod cannot see one object at a time. */
function modelProblems(config: Config): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  const builtIn = new Set(['local-llama', 'local-espeak', 'local-preview']);
  for (const model of config.models) {
    if (ids.has(model.id)) problems.push(`model ${model.id} is listed twice`);
    const engineOptions = LOCAL_OPTION_SCHEMAS[model.provider];
    const unread = engineOptions ? model.allowedOptions.filter((key) => !(key in engineOptions.shape)) : [];
    if (engineOptions && unread.length > 0) {
      problems.push(`model ${model.id}: ${model.provider} reads no option ${unread.join(', ')} (it reads: ${Object.keys(engineOptions.shape).join(', ')})`);
    }
    ids.add(model.id);
    if (!builtIn.has(model.provider) && !config.providers[model.provider]) {
      problems.push(`model ${model.id} names provider "${model.provider}", which is not configured`);
    }
    if (model.capability !== 'chat' && config.providers[model.provider]?.type === 'anthropic') {
      problems.push(`model ${model.id}: provider ${model.provider} speaks the Anthropic protocol, which serves chat only`);
    }
    if (model.capability === 'chat' && model.defaultMaxTokens > model.maxTokens) {
      problems.push(`model ${model.id}: defaultMaxTokens exceeds maxTokens`);
    }
    if (model.capability === 'image') {
      if (!model.sizes.includes(model.defaultSize)) problems.push(`model ${model.id}: defaultSize is not in sizes`);
      for (const size of model.sizes) {
        if (!model.price.perImageBySize[size]) problems.push(`model ${model.id}: no price for size ${size}`);
      }
    }
    if (model.capability === 'speech') {
      if (!model.voices.includes(model.defaultVoice)) problems.push(`model ${model.id}: defaultVoice is not in voices`);
      if (!model.formats.includes(model.defaultFormat)) problems.push(`model ${model.id}: defaultFormat is not in formats`);
      const { supported } = speechProviderFormats(model.provider);
      const unsupported = model.formats.filter((format) => !supported.includes(format));
      if (unsupported.length > 0) {
        problems.push(`model ${model.id}: provider ${model.provider} cannot produce ${unsupported.join(', ')} (it can: ${supported.join(', ')})`);
      }
    }
  }
  for (const model of config.models) {
    const fallback = model.fallback && config.models.find((m) => m.id === model.fallback);
    if (model.fallback && (!fallback || fallback.capability !== model.capability)) {
      problems.push(`model ${model.id}: fallback ${model.fallback} is not a ${model.capability} model`);
    } else if (fallback && !costsNoMore(fallback, model)) {
      problems.push(`model ${model.id}: fallback ${fallback.id} is priced higher; a fallback must cost the same or less`);
    }
  }
  for (const capability of ['chat', 'image', 'speech'] as const) {
    const id = config.defaults[capability];
    if (id && !config.models.some((m) => m.id === id && m.capability === capability)) {
      problems.push(`defaults.${capability} names ${id}, which is not a ${capability} model`);
    }
  }
  return problems;
}

/** Every price component of `fallback` is at most the same component of `model` (sizes both offer, for images). */
function costsNoMore(fallback: ModelConfig, model: ModelConfig): boolean {
  const a = fallback.price as Record<string, string | Record<string, string>>;
  const b = model.price as Record<string, string | Record<string, string>>;
  return Object.entries(a).every(([component, value]) => {
    const limit = b[component];
    if (typeof value === 'string') return typeof limit === 'string' && BigInt(value) <= BigInt(limit);
    return typeof limit === 'object' && Object.entries(value).every(([size, amount]) => limit[size] === undefined || BigInt(amount) <= BigInt(limit[size]));
  });
}
