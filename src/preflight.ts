// Pre-flight: loads a config exactly as startup does (src/config/load.ts, the rails with their secrets, the
// ledger, the media store) and checks it against the world it names before going live: each chain answers
// with the configured chain id, the asset is the token the EIP-712 domain says, the settlement key and the
// Solana fee payer can pay their fees, payTo can receive, a remote facilitator supports what is configured,
// the database and the media store work, upstream providers answer. It reuses the checks /readyz runs
// (http/readiness-checks.ts) and those startup logs as NOT READY (each facilitator's readinessProblems), and
// returns every finding rather than stopping at the first.
import { mkdirSync } from 'node:fs';
import { createPublicClient, http, parseAbi, type Address } from 'viem';
import { ConfigError, loadConfig, type Config } from './config/load.ts';
import { configuredRails } from './payments/configured-rails.ts';
import type { PaymentRail } from './payments/rails.ts';
import { openLedger } from './store/open-ledger.ts';
import { mediaStoreFromConfig } from './media/media-store-from-config.ts';
import { checkReadiness, type CheckResult } from './http/readiness-checks.ts';
import { RemoteFacilitator } from './payments/facilitators/remote.ts';
import type { NetworkName } from './x402/networks.ts';
import type { Ledger } from './store/ledger.ts';
import type { MediaStore } from './media/media-store.ts';
import { operatorTokenProblems } from './http/admin/admin-auth.ts';

export interface Finding {
  /** fatal: a paid call would fail (or a payment be lost) until it is fixed; warning: works, but less well */
  severity: 'fatal' | 'warning' | 'ok';
  /** what was checked: a config path (networks.base) or a dependency (ledger, media, providers.openai) */
  subject: string;
  message: string;
}

type Env = Record<string, string | undefined>;

const tokenAbi = parseAbi([
  'function decimals() view returns (uint8)',
  'function name() view returns (string)',
  'function version() view returns (string)',
]);

const fatal = (subject: string, message: string): Finding => ({ severity: 'fatal', subject, message });
const ok = (subject: string, message: string): Finding => ({ severity: 'ok', subject, message });
const warning = (subject: string, message: string): Finding => ({ severity: 'warning', subject, message });

/** First line of an error (and its cause's code), never a stack, never a secret. */
function reason(error: unknown): string {
  const { message, shortMessage, cause } = error as { message?: string; shortMessage?: string; cause?: { code?: string } };
  const first = (shortMessage ?? message ?? String(error)).split('\n')[0]!;
  return cause?.code && !first.includes(cause.code) ? `${first} (${cause.code})` : first;
}

async function attempt<T>(run: () => Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await run() };
  } catch (error) {
    return { error: reason(error) };
  }
}

/** Runs every check the config allows and returns all findings; an unusable config is one finding per problem. */
export async function preflight(env: Env = process.env): Promise<Finding[]> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return configProblems('config', error);
    throw error;
  }
  const findings: Finding[] = [];
  if (config.sandbox.enabled) findings.push(fatal('config', 'sandbox mode: no live networks are configured (set "networks" in the config file)'));

  // one network at a time, as startup builds them, so a bad secret on one network does not hide the others' findings
  const rails = new Map<NetworkName, PaymentRail>();
  for (const name of Object.keys(config.networks) as NetworkName[]) {
    try {
      const built = await configuredRails({ ...config, networks: { [name]: config.networks[name] } }, env);
      for (const [network, rail] of built) rails.set(network, rail);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      findings.push(...configProblems('config', error)); // secrets, an upto setting the chain or facilitator cannot honour
    }
  }

  findings.push(...operatorTokenProblems(config, env).map((problem) => fatal('config', problem)));

  mkdirSync(config.dataDir, { recursive: true });
  const ledger = await attempt(() => openLedger(config).then(({ ledger }) => ledger));
  const media = await attempt(() => mediaStoreFromConfig(config, env));
  if ('error' in ledger) findings.push(fatal('ledger', ledger.error));
  if ('error' in media) findings.push(fatal('media', media.error));
  try {
    if ('value' in ledger && 'value' in media) findings.push(...(await readinessFindings(config, rails, ledger.value, media.value.store)));
    if ('value' in media) findings.push(await mediaWritable(media.value.store));
    findings.push(...(await Promise.all([...rails.values()].map((rail) => chainFindings(config, rail)))).flat());
  } finally {
    if ('value' in ledger) await ledger.value.close();
    if ('value' in media) media.value.close();
  }
  return findings;
}

/** A ConfigError's message lists one problem per indented line; each becomes a finding. */
function configProblems(subject: string, error: ConfigError): Finding[] {
  const lines = error.message.split('\n');
  const problems = lines.length > 1 ? lines.slice(1).map((line) => line.trim()).filter(Boolean) : lines;
  return problems.map((problem) => fatal(subject, problem));
}

/** What GET /readyz would say now, as findings: chains and remote facilitators reachable, ledger, media, providers, upto. */
async function readinessFindings(config: Config, rails: Map<NetworkName, PaymentRail>, ledger: Ledger, media: MediaStore): Promise<Finding[]> {
  const report = await checkReadiness({ config, ledger, media, rails, sandboxRpcUrls: new Map() }, [...rails.keys()]);
  const said = (subject: string, result: CheckResult, what: string, severity: 'fatal' | 'warning' = 'fatal'): Finding =>
    result.status === 'ok' ? ok(subject, `${what} (${result.latencyMs} ms)`) : { severity, subject, message: `${what}: down: ${result.error ?? 'no answer'}` };
  return [
    ...Object.entries(report.chains).map(([name, result]) => {
      const facilitator = config.networks[name as NetworkName]?.facilitator;
      return said(`networks.${name}`, result, facilitator?.type === 'remote' ? `facilitator ${facilitator.url} answers` : 'RPC answers');
    }),
    said('ledger', report.ledger, `ledger (${config.databaseUrl ? 'PostgreSQL' : 'SQLite'}) answers a read`),
    said('media', report.media, `media store (${config.media.store}) answers a lookup`),
    ...Object.entries(report.providers).map(([name, result]) => said(`providers.${name}`, result, `upstream ${config.providers[name]!.baseURL} answers`)),
    ...Object.entries(report.upto).map(([name, result]) =>
      said(`networks.${name}.upto`, result, 'upto can be paid (Permit2 and the upto proxy, or the facilitator lists it)', 'warning'),
    ),
  ];
}

/** The media store takes a file and gives it back: a write, a lookup and a delete. */
async function mediaWritable(media: MediaStore): Promise<Finding> {
  const written = await attempt(async () => {
    const info = await media.put(new TextEncoder().encode('x402 preflight'), 'text/plain');
    const found = await media.info(info.id);
    await media.delete(info.id);
    if (!found) throw new Error(`a file written as ${info.id} could not be found again`);
  });
  return 'error' in written ? fatal('media', `media store is not writable: ${written.error}`) : ok('media', 'media store is writable');
}

async function chainFindings(config: Config, rail: PaymentRail): Promise<Finding[]> {
  const name = rail.network.name;
  const settings = config.networks[name]!;
  const subject = `networks.${name}`;
  const findings: Finding[] = [];
  if (settings.facilitator.type === 'remote') {
    // the same look-up the gateway makes before its first payment there
    const facilitator = rail.facilitator;
    if (facilitator instanceof RemoteFacilitator) {
      const supported = await attempt(() => facilitator.requirementExtra());
      findings.push('error' in supported ? fatal(subject, supported.error) : ok(subject, `facilitator supports exact payments on ${name}`));
    }
    return findings;
  }
  const rpcUrl = settings.facilitator.rpcUrl;
  const chain = rail.network.family === 'evm' ? await evmAssetFindings(subject, rail, rpcUrl) : await svmChainFindings(subject, rail, rpcUrl);
  findings.push(...chain);
  // an RPC that does not answer, or answers for another chain, has said all there is to say about this network
  if (chain.some((finding) => finding.severity === 'fatal' && finding.message.startsWith('RPC '))) return findings;
  // the checks startup logs as NOT READY: gas of the settlement key or fee payer, payTo's token account, Multicall3
  const problems = await attempt(() => rail.facilitator.readinessProblems?.(rail.payTo) ?? Promise.resolve([]));
  if ('error' in problems) findings.push(fatal(subject, `could not check that ${name} is ready to be paid: ${problems.error}`));
  else {
    const left = problems.value.filter((problem) => !problem.includes('no contract at asset')); // said above with more detail
    findings.push(...left.map((problem) => fatal(subject, problem)));
    if (left.length === 0) findings.push(ok(subject, rail.network.family === 'evm' ? 'settlement key has gas' : 'fee payer has SOL and payTo has its token account'));
  }
  return findings;
}

async function evmAssetFindings(subject: string, rail: PaymentRail, rpcUrl: string): Promise<Finding[]> {
  const network = rail.network;
  if (network.family !== 'evm') return [];
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 5_000 }) });
  const chainId = await attempt(() => client.getChainId());
  if ('error' in chainId) return [fatal(subject, `RPC ${new URL(rpcUrl).host} gives no chain id: ${chainId.error}`)];
  if (chainId.value !== network.chainId) {
    return [fatal(subject, `RPC ${new URL(rpcUrl).host} is chain ${chainId.value}, not ${network.name} (${network.chainId})`)];
  }
  const findings = [ok(subject, `RPC is chain ${chainId.value}`)];
  const asset = rail.asset as Address;
  const code = await attempt(() => client.getCode({ address: asset }));
  if ('error' in code || !code.value) {
    return [...findings, fatal(subject, `no contract at asset ${asset} on ${network.name}: every payment there would fail`)];
  }
  const domain = rail.extra as { name?: string; version?: string };
  const read = (functionName: 'decimals' | 'name' | 'version') => attempt(() => client.readContract({ address: asset, abi: tokenAbi, functionName }));
  const [decimals, tokenName, version] = await Promise.all([read('decimals'), read('name'), read('version')]);
  if ('error' in decimals) findings.push(fatal(subject, `asset ${asset} does not answer decimals(): not an ERC-20 token`));
  else if (decimals.value !== 6) findings.push(warning(subject, `asset ${asset} has ${decimals.value} decimals; prices are written in 6-decimal (USDC) atomic units`));
  if ('error' in tokenName) findings.push(fatal(subject, `asset ${asset} does not answer name(), which its EIP-712 domain needs`));
  else if (tokenName.value !== domain.name) {
    findings.push(fatal(subject, `asset ${asset} is named "${tokenName.value}" but the EIP-712 domain says "${domain.name}": payers' signatures would not verify (set networks.${network.name}.eip712)`));
  }
  if ('error' in version) findings.push(warning(subject, `asset ${asset} does not answer version(); the EIP-712 domain says "${domain.version}": check it against the token`));
  else if (version.value !== domain.version) {
    findings.push(fatal(subject, `asset ${asset} has version "${version.value}" but the EIP-712 domain says "${domain.version}": payers' signatures would not verify (set networks.${network.name}.eip712)`));
  }
  if (findings.length === 1) findings.push(ok(subject, `asset ${asset} is "${domain.name}" version "${domain.version}", 6 decimals, as configured`));
  return findings;
}

async function svmChainFindings(subject: string, rail: PaymentRail, rpcUrl: string): Promise<Finding[]> {
  const call = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(5_000),
    });
    const answer = (await response.json()) as { result?: T; error?: { message?: string } };
    if (answer.error || answer.result === undefined) throw new Error(answer.error?.message ?? `HTTP ${response.status}`);
    return answer.result;
  };
  const genesis = await attempt(() => call<string>('getGenesisHash'));
  const expected = rail.network.caip2.slice('solana:'.length);
  if ('error' in genesis) return [fatal(subject, `RPC ${new URL(rpcUrl).host} gives no genesis hash: ${genesis.error}`)];
  if (!genesis.value.startsWith(expected)) return [fatal(subject, `RPC ${new URL(rpcUrl).host} is not ${rail.network.name} (genesis ${genesis.value}, expected ${expected}…)`)];
  const mint = await attempt(() =>
    call<{ value: { data: { parsed?: { type?: string; info?: { decimals?: number } } } } | null }>('getAccountInfo', [rail.asset, { encoding: 'jsonParsed' }]),
  );
  if ('error' in mint) return [fatal(subject, `could not read mint ${rail.asset}: ${mint.error}`)];
  const parsed = mint.value.value?.data.parsed;
  if (!mint.value.value) return [fatal(subject, `no account at mint ${rail.asset} on ${rail.network.name}`)];
  if (parsed?.type !== 'mint') return [fatal(subject, `${rail.asset} is not a token mint`)];
  if (parsed.info?.decimals !== 6) return [warning(subject, `mint ${rail.asset} has ${parsed.info?.decimals} decimals; prices are written in 6-decimal (USDC) atomic units`)];
  return [ok(subject, `RPC is ${rail.network.name}; mint ${rail.asset} has 6 decimals`)];
}

/** One line per finding, fatal ones first; the exit code is 1 when any is fatal. */
export function formatFindings(findings: readonly Finding[]): { text: string; exitCode: number } {
  const order = { fatal: 0, warning: 1, ok: 2 } as const;
  const label = { fatal: 'FATAL  ', warning: 'WARNING', ok: 'ok     ' } as const;
  const sorted = [...findings].sort((a, b) => order[a.severity] - order[b.severity]);
  const fatals = findings.filter((finding) => finding.severity === 'fatal').length;
  const warnings = findings.filter((finding) => finding.severity === 'warning').length;
  const lines = sorted.map((finding) => `${label[finding.severity]} ${finding.subject}: ${finding.message}`);
  lines.push(fatals > 0 ? `not ready to go live: ${fatals} fatal finding${fatals === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}` : `ready to go live (${warnings} warning${warnings === 1 ? '' : 's'})`);
  return { text: lines.join('\n'), exitCode: fatals > 0 ? 1 : 0 };
}
