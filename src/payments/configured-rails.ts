// Rails for real networks, from config: the operator's payTo, the network's USDC (or a configured asset),
// and a local facilitator (our RPC + our key from the environment) or a remote one; on EVM networks the
// metered `upto` scheme beside `exact` where it can be paid (upto-offer.ts, the network's `upto` setting).
// A local upto facilitator settles from the same key as exact and through the same EvmSender (one nonce
// sequence per key, shared with the other instances through the ledger): one key to fund and guard, and the
// payer's witness names the address that already holds the gas.
import type { Config } from '../config/load.ts';
import type { NetworkConfig } from '../config/schema.ts';
import { ConfigError, InvalidConfigurationError } from '../config/load.ts';
import { readSecret } from '../config/secret.ts';
import { NETWORKS, type Network, type NetworkName } from '../x402/networks.ts';
import { libsecp256k1Account } from '../x402/libsecp256k1-account.ts';
import type { Facilitator } from './facilitator.ts';
import type { PaymentRail, SchemeOffer, UptoOffer } from './rails.ts';
import { LocalEvmFacilitator } from './facilitators/evm/local-evm.ts';
import { LocalEvmUptoFacilitator } from './facilitators/evm/local-evm-upto.ts';
import { localUptoOffer, remoteUptoOffer } from './upto-offer.ts';
import { LocalEvmAuthCaptureFacilitator } from './facilitators/evm/local-evm-auth-capture.ts';
import { localAuthCaptureOffer } from './auth-capture-offer.ts';
import { LocalEvmChannelFacilitator } from './facilitators/evm/local-evm-channels.ts';
import { channelOffer } from './channels/channel-offer.ts';
import { RemoteChannelFacilitator, remoteChannelKind } from './facilitators/remote-channels.ts';
import type { ChannelOffer } from './rails.ts';
import type { Logger } from 'pino';
import { RemoteFacilitator } from './facilitators/remote.ts';
import type { PendingCount } from '../store/nonce-allocator.ts';
import type { Ledger } from '../store/ledger.ts';
import { privateKeyToAccount } from 'viem/accounts';

type Env = Record<string, string | undefined>;

/** The EVM private key in the environment variable `name`; a ConfigError naming it (never its value) when malformed. */
function evmPrivateKey(env: Env, name: string): `0x${string}` {
  const secret = readSecret(env, name);
  if (!/^0x[0-9a-fA-F]{64}$/.test(secret)) throw new ConfigError(`${name} must be a 0x-prefixed 32-byte hex private key`);
  return secret as `0x${string}`;
}

async function facilitatorFor(network: Network, settings: NetworkConfig, asset: string, config: Config, env: Env, ledger?: () => Ledger | undefined): Promise<Facilitator> {
  const f = settings.facilitator;
  if (f.type === 'remote') return remoteFacilitatorFor(network, settings, env);
  if (network.family === 'evm') {
    const secret = evmPrivateKey(env, f.secretKeyEnv);
    // a shared ledger coordinates the key's nonces with the other instances that may send with it
    // (asked at the first send: the ledger opens after the rails are built)
    const address = privateKeyToAccount(secret).address;
    return new LocalEvmFacilitator({
      nonces: (pendingCount: PendingCount) => ledger?.()?.settlementNonces?.(network.chainId, address, pendingCount),
      network,
      rpcUrl: f.rpcUrl,
      settlementPrivateKey: secret,
      asset: asset as `0x${string}`,
      eip712: settings.eip712 ?? network.eip712,
      receiptTimeoutMs: config.settlementTimeoutMs,
      batchSettlements: config.settlementBatching,
    });
  }
  // @solana/kit is loaded only where a Solana network is configured
  const { createLocalSvmFacilitator } = await import('./facilitators/svm/local-svm-factory.ts');
  return createLocalSvmFacilitator({ network, rpcUrl: f.rpcUrl, secretKey: readSecret(env, f.secretKeyEnv), asset, confirmTimeoutMs: config.settlementTimeoutMs });
}

function remoteFacilitatorFor(network: Network, settings: NetworkConfig, env: Env, scheme: 'exact' | 'upto' = 'exact'): RemoteFacilitator {
  const f = settings.facilitator;
  if (f.type !== 'remote') throw new Error('not a remote facilitator');
  return new RemoteFacilitator({
    url: f.url,
    network,
    authorization: f.authorizationEnv ? readSecret(env, f.authorizationEnv) : undefined,
    timeoutMs: f.timeoutMs,
    scheme,
  });
}

/** The rail's upto offer, if any (EVM only); a ConfigError when the setting cannot be honoured. */
async function uptoOfferFor(network: Network, settings: NetworkConfig, exact: Facilitator, asset: string, config: Config, env: Env, log?: Logger): Promise<UptoOffer | undefined> {
  if (network.family !== 'evm' || settings.upto === 'off') return undefined;
  const f = settings.facilitator;
  if (f.type === 'remote') return remoteUptoOffer(remoteFacilitatorFor(network, settings, env, 'upto'), settings.upto, network.name, log);
  // the exact facilitator's sender: the same key's one nonce sequence
  const sender = exact instanceof LocalEvmFacilitator ? exact.sender : undefined;
  const upto = new LocalEvmUptoFacilitator({
    network,
    rpcUrl: f.rpcUrl,
    settlementPrivateKey: readSecret(env, f.secretKeyEnv) as `0x${string}`,
    asset: asset as `0x${string}`,
    receiptTimeoutMs: config.settlementTimeoutMs,
    sender,
  });
  return localUptoOffer(upto, settings.upto, network.name, log);
}

/** The rail's auth-capture offer, if any (EVM with a local facilitator): charges go out through the exact key's sender. */
async function authCaptureOfferFor(network: Network, settings: NetworkConfig, exact: Facilitator, asset: string, config: Config, env: Env, log?: Logger): Promise<SchemeOffer | undefined> {
  if (network.family !== 'evm' || settings.authCapture === 'off') return undefined;
  const f = settings.facilitator;
  if (f.type === 'remote' || !(exact instanceof LocalEvmFacilitator)) {
    if (settings.authCapture === 'on') throw new ConfigError('authCapture is "on" but it needs a local facilitator (our key is the escrow\'s operator)');
    return undefined;
  }
  const facilitator = new LocalEvmAuthCaptureFacilitator({
    network,
    rpcUrl: f.rpcUrl,
    settlementPrivateKey: readSecret(env, f.secretKeyEnv) as `0x${string}`,
    asset: asset as `0x${string}`,
    eip712: settings.eip712 ?? network.eip712,
    receiptTimeoutMs: config.settlementTimeoutMs,
    sender: exact.sender,
  });
  return localAuthCaptureOffer(facilitator, settings.authCapture, network.name, log);
}

/**
 * The rail's payment-channel offer, if any (EVM with a local facilitator): deposits, claims and refunds go out
 * through the exact facilitator's sender (the key's one nonce sequence); the same key authorizes claims.
 */
async function channelOfferFor(
  network: Network,
  settings: NetworkConfig,
  exact: Facilitator,
  config: Config,
  env: Env,
  ledger?: () => Ledger | undefined,
  log?: Logger,
): Promise<ChannelOffer | undefined> {
  if (network.family !== 'evm' || settings.channels === 'off') return undefined;
  const f = settings.facilitator;
  if (f.type === 'remote') {
    // receiver authorization kept (our key signs claims and refunds) or delegated to the facilitator's receiverAuthorizer
    const remote = { url: f.url, network, timeoutMs: f.timeoutMs, ...(f.authorizationEnv ? { authorization: readSecret(env, f.authorizationEnv) } : {}) };
    const receiverKey = f.receiverAuthorizerKeyEnv ? libsecp256k1Account(evmPrivateKey(env, f.receiverAuthorizerKeyEnv)) : undefined;
    const kind = await remoteChannelKind(remote).catch((error: unknown) => {
      log?.info({ network: network.name }, `batch-settlement: the facilitator's /supported could not be read (${(error as Error).message.split('\n')[0]})`);
      return undefined;
    });
    const authorizer = receiverKey?.address ?? kind?.receiverAuthorizer;
    if (!kind || !authorizer) {
      const missing = kind ? 'a batch-settlement kind with a receiverAuthorizer (or set receiverAuthorizerKeyEnv)' : 'a batch-settlement kind';
      if (settings.channels === 'on') throw new ConfigError(`channels is "on" but the remote facilitator's /supported lists no ${missing} for this network`);
      log?.info({ network: network.name }, `batch-settlement not offered on ${network.name}: the facilitator does not list ${missing}`);
      return undefined;
    }
    const facilitator = new RemoteChannelFacilitator({
      ...remote,
      receiverAuthorizer: authorizer,
      ...(receiverKey ? { receiverKey } : {}),
      sponsorsPermits: kind.sponsorsPermits,
      store: () => ledger?.()?.channels,
    });
    return channelOffer(facilitator, { mode: 'on', network: network.name, ...channelTerms(config), ...(log ? { log } : {}) });
  }
  if (!(exact instanceof LocalEvmFacilitator)) return undefined;
  const facilitator = new LocalEvmChannelFacilitator({
    network,
    rpcUrl: f.rpcUrl,
    settlementPrivateKey: readSecret(env, f.secretKeyEnv) as `0x${string}`,
    receiptTimeoutMs: config.settlementTimeoutMs,
    sender: exact.sender,
  });
  return channelOffer(facilitator, { mode: settings.channels, network: network.name, ...channelTerms(config), ...(log ? { log } : {}) });
}

/** What channels to this gateway are opened with, from config. */
const channelTerms = (config: Config) => ({ withdrawDelay: config.channels.withdrawDelay, depositMethod: config.channels.depositMethod });

/**
 * One rail per configured network. Every secret that is missing or malformed is named in one ConfigError
 * (never its value), so startup stops once with all of them.
 */
export async function configuredRails(
  config: Config,
  env: Env = process.env,
  ledger?: () => Ledger | undefined,
  log?: Logger,
): Promise<Map<NetworkName, PaymentRail>> {
  const rails = new Map<NetworkName, PaymentRail>();
  const problems: string[] = [];
  const built: { name: NetworkName; rail: PaymentRail; upto: Promise<UptoOffer | undefined>; channels: Promise<ChannelOffer | undefined>; authCapture: Promise<SchemeOffer | undefined> }[] = [];
  for (const [name, settings] of Object.entries(config.networks) as [NetworkName, NetworkConfig][]) {
    const network = NETWORKS[name];
    const asset = settings.asset ?? network.usdc;
    let facilitator: Facilitator;
    try {
      facilitator = await facilitatorFor(network, settings, asset, config, env, ledger);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(`networks.${name}: ${error.message}`);
      continue;
    }
    const extra =
      network.family === 'evm' ? (settings.eip712 ?? network.eip712) : await facilitator.requirementExtra();
    // every network's upto check (eth_getCode or /supported) at once: startup waits for the slowest only
    const upto = uptoOfferFor(network, settings, facilitator, asset, config, env, log);
    upto.catch(() => undefined); // awaited below; never an unhandled rejection if startup stops first
    const channels = channelOfferFor(network, settings, facilitator, config, env, ledger, log);
    channels.catch(() => undefined);
    const authCapture = authCaptureOfferFor(network, settings, facilitator, asset, config, env, log);
    authCapture.catch(() => undefined);
    built.push({ name, rail: { network, payTo: settings.payTo, asset, facilitator, extra }, upto, channels, authCapture });
  }
  for (const { name, rail, upto, channels, authCapture } of built) {
    try {
      const offer = await upto;
      const channelsOffer = await channels;
      const authCaptureOffer = await authCapture;
      rails.set(name, { ...rail, ...(offer ? { upto: offer } : {}), ...(channelsOffer ? { channels: channelsOffer } : {}), ...(authCaptureOffer ? { authCapture: authCaptureOffer } : {}) });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(`networks.${name}: ${error.message}`);
    }
  }
  if (problems.length > 0) throw new InvalidConfigurationError(problems);
  return rails;
}
