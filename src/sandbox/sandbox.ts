// Sandbox mode: a local chain with test USDC behind every sandbox network, the operator's keys generated
// at start, and a faucet. Nothing here runs outside sandbox mode.
import { Hono } from 'hono';
import { z } from 'zod';
import { NETWORKS, type NetworkName } from '../x402/networks.ts';
import { ApiError } from '../errors.ts';
import { startEvmSandbox, type EvmSandbox } from './evm/evm-sandbox.ts';
import { LocalEvmFacilitator } from '../payments/facilitators/evm/local-evm.ts';
import { LocalEvmUptoFacilitator } from '../payments/facilitators/evm/local-evm-upto.ts';
import { localUptoOffer } from '../payments/upto-offer.ts';
import { localAuthCaptureOffer } from '../payments/auth-capture-offer.ts';
import { LocalEvmAuthCaptureFacilitator } from '../payments/facilitators/evm/local-evm-auth-capture.ts';
import { LocalEvmChannelFacilitator } from '../payments/facilitators/evm/local-evm-channels.ts';
import { channelOffer, type DepositMethod } from '../payments/channels/channel-offer.ts';
import type { SvmRuntime } from './svm/svm-sandbox.ts';
import { svmKeptFiles, svmSandboxKeys } from './svm/sandbox-keys.ts';
import { listenJsonRpc } from './svm/json-rpc-listener.ts';
import { atFirstUse } from '../lib/at-first-use.ts';
import { loadedAtFirstUse } from '../payments/facilitators/loaded-at-first-use.ts';
import type { PaymentRail } from '../payments/rails.ts';
import { parseOrThrow } from '../api/validate.ts';
import { LOCAL_ONLY, type ChainListen } from './listen.ts';

interface SandboxChain {
  network: NetworkName;
  /** where this process reaches the chain */
  rpcUrl: string;
  /** where buyers reach it: /healthz and the startup log hand this one out */
  publicRpcUrl: string;
  asset: string;
  payTo: string;
  rail: PaymentRail;
  faucet(address: string, amount?: bigint): Promise<Record<string, string>>;
  balanceOf(address: string): Promise<bigint>;
  /** EVM only: block production control, for tests of slow or lost settlements */
  mining?: { setAutomine(enabled: boolean): Promise<void>; mine(): Promise<void> };
  /** Solana only: the chain jumps `blocks` ahead (151 expires every blockhash handed out so far), for tests of expiry */
  advanceBlocks?(blocks: number): Promise<void>;
  stop(): Promise<void>;
}

export interface Sandbox {
  chains: ReadonlyMap<NetworkName, SandboxChain>;
  routes: Hono;
  health(): Record<string, unknown>;
  stop(): Promise<void>;
}

async function startEvmChain(name: NetworkName, settlementTimeoutMs: number, options: SandboxOptions, listen: ChainListen): Promise<SandboxChain> {
  const network = NETWORKS[name];
  if (network.family !== 'evm') throw new Error(`${name} is not an EVM network`);
  const chain: EvmSandbox = await startEvmSandbox(network, { listen, ...(options.stateDir ? { stateDir: options.stateDir } : {}) });
  const facilitator = new LocalEvmFacilitator({
    network,
    rpcUrl: chain.rpcUrl,
    settlementPrivateKey: chain.settlementPrivateKey,
    asset: chain.asset,
    eip712: chain.eip712,
    receiptTimeoutMs: settlementTimeoutMs,
    // anvil mines a few ms after eth_sendRawTransaction answers (later as its chain grows), and viem's receipt
    // wait, its first look missed, waits a whole interval for the next: keep that short on a local node
    pollingIntervalMs: 10,
    batchSettlements: options.settlementBatching,
  });
  // Permit2 and the upto proxy are on every sandbox chain; a key of its own keeps upto's nonces apart
  const upto = new LocalEvmUptoFacilitator({
    network,
    rpcUrl: chain.rpcUrl,
    settlementPrivateKey: chain.uptoSettlementPrivateKey,
    asset: chain.asset,
    receiptTimeoutMs: settlementTimeoutMs,
    pollingIntervalMs: 10,
  });
  const uptoOffer = await localUptoOffer(upto, 'auto', name);
  // the batch-settlement escrow is on every sandbox chain; channels send through the exact key's sender
  const channels = await channelOffer(
    new LocalEvmChannelFacilitator({
      network,
      rpcUrl: chain.rpcUrl,
      settlementPrivateKey: chain.settlementPrivateKey,
      receiptTimeoutMs: settlementTimeoutMs,
      sender: facilitator.sender,
    }),
    {
      mode: 'auto',
      network: name,
      ...(options.channelWithdrawDelay ? { withdrawDelay: options.channelWithdrawDelay } : {}),
      ...(options.channelDepositMethod ? { depositMethod: options.channelDepositMethod } : {}),
    },
  );
  // Commerce Payments' escrow is on every sandbox chain; the operator charging it is the exact key, through its sender
  const authCapture = await localAuthCaptureOffer(
    new LocalEvmAuthCaptureFacilitator({
      network,
      rpcUrl: chain.rpcUrl,
      settlementPrivateKey: chain.settlementPrivateKey,
      asset: chain.asset,
      eip712: chain.eip712,
      receiptTimeoutMs: settlementTimeoutMs,
      pollingIntervalMs: 10,
      sender: facilitator.sender,
    }),
    'auto',
    name,
  );
  return {
    network: name,
    rpcUrl: chain.rpcUrl,
    publicRpcUrl: chain.publicRpcUrl,
    asset: chain.asset,
    payTo: chain.payTo,
    rail: {
      network,
      payTo: chain.payTo,
      asset: chain.asset,
      facilitator,
      extra: await facilitator.requirementExtra(),
      ...(uptoOffer ? { upto: uptoOffer } : {}),
      ...(channels ? { channels } : {}),
      ...(authCapture ? { authCapture } : {}),
    },
    async faucet(address, amount) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(address)) {
        throw new ApiError(400, 'invalid_request', `address: not an EVM address`, { field: 'address' });
      }
      const result = await chain.faucet(address as `0x${string}`, amount).catch((error: unknown) => {
        if (error instanceof RangeError) throw new ApiError(400, 'invalid_request', `amount: ${error.message}`, { field: 'amount' });
        throw error;
      });
      return { balance: result.balance.toString(), nativeBalance: result.nativeBalance.toString() };
    },
    balanceOf: (address) => chain.balanceOf(address as `0x${string}`),
    mining: { setAutomine: (enabled) => chain.setAutomine(enabled), mine: () => chain.mine() },
    stop: () => chain.stop(),
  };
}

/**
 * A Solana sandbox chain whose runtime (litesvm, @solana/kit, the facilitator: ~40 MB) loads at its first use: its
 * RPC's first request other than getHealth, the first payment, faucet or balance. Its keys and RPC port are
 * there from the start, so the 402 and /healthz name it as before.
 */
async function startSvmChain(name: NetworkName, settlementTimeoutMs: number, listen: ChainListen, stateDir?: string): Promise<SandboxChain> {
  const network = NETWORKS[name];
  if (network.family !== 'svm') throw new Error(`${name} is not a Solana network`);
  const files = stateDir === undefined ? undefined : svmKeptFiles(stateDir, network);
  const { keys, kept } = svmSandboxKeys(files);
  const runtime = atFirstUse(async (): Promise<SvmRuntime> => {
    const { openSvmRuntime } = await import('./svm/svm-sandbox.ts');
    return openSvmRuntime(network, { keys, kept, ...(files ? { files } : {}) });
  });
  // a health probe (/readyz's) is answered by the listener itself until the runtime is up
  const server = await listenJsonRpc(listen, async (request) =>
    request.method === 'getHealth' && !runtime.ifOpen() ? { jsonrpc: '2.0', id: request.id ?? null, result: 'ok' } : (await runtime.get()).answer(request),
  );
  const facilitator = loadedAtFirstUse({ feePayer: keys.feePayer.address }, async () => {
    const { LocalSvmFacilitator } = await import('../payments/facilitators/svm/local-svm.ts');
    return new LocalSvmFacilitator({
      network,
      rpcUrl: server.url,
      feePayer: keys.feePayer.secretKey,
      asset: network.usdc,
      confirmTimeoutMs: settlementTimeoutMs,
      pollingIntervalMs: 10,
    });
  });
  return {
    network: name,
    rpcUrl: server.url,
    publicRpcUrl: server.publicUrl,
    asset: network.usdc,
    payTo: keys.operator.address,
    rail: { network, payTo: keys.operator.address, asset: network.usdc, facilitator, extra: await facilitator.requirementExtra() },
    async faucet(address, amount) {
      if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address)) {
        throw new ApiError(400, 'invalid_request', 'address: not a Solana address', { field: 'address' });
      }
      const result = await (await runtime.get()).faucet(address, amount).catch((error: unknown) => {
        if (error instanceof RangeError) throw new ApiError(400, 'invalid_request', `amount: ${error.message}`, { field: 'amount' });
        throw error;
      });
      return { balance: result.balance.toString(), lamports: result.lamports.toString() };
    },
    balanceOf: async (address) => (await runtime.get()).balanceOf(address),
    mining: { setAutomine: async (enabled) => (await runtime.get()).setAutomine(enabled), mine: async () => (await runtime.get()).mine() },
    advanceBlocks: async (blocks) => (await runtime.get()).advanceBlocks(blocks),
    stop: async () => {
      (await runtime.settled())?.stop();
      await server.close();
    },
  };
}

const faucetRequest = z
  .object({
    network: z.string(),
    address: z.string().min(1).max(100),
    amount: z
      .union([z.string().regex(/^\d{1,16}$/), z.number().int().positive()])
      .optional()
      .describe('test USDC in atomic units; default 100 USDC'),
  })
  .strict();

const balanceRequest = z.object({ network: z.string(), address: z.string().min(1).max(100) }).strict();

export interface SandboxOptions {
  /** EVM exact settlements batched through Multicall3 (config settlementBatching) */
  settlementBatching?: boolean;
  /** the withdraw delay payment channels are opened with (config channels.withdrawDelay) */
  channelWithdrawDelay?: number;
  /** how payers deposit into channels (config.channels.depositMethod) */
  channelDepositMethod?: DepositMethod;
  /**
   * where the chains' JSON-RPC listen (config sandbox.host, sandbox.portBase, sandbox.publicHost): the n-th
   * network on portBase + n when a base is given, else on ports the OS picks; default 127.0.0.1
   */
  listen?: { host: string; portBase?: number; publicHost?: string };
  /** where each chain keeps its state and keys across restarts (config dataDir/sandbox, kept-state.ts); absent: nothing kept */
  stateDir?: string;
}

/** The n-th chain's listen address. */
function chainListen(options: SandboxOptions, index: number): ChainListen {
  const listen = options.listen ?? { host: LOCAL_ONLY.host };
  return {
    host: listen.host,
    port: listen.portBase === undefined ? 0 : listen.portBase + index,
    ...(listen.publicHost ? { publicHost: listen.publicHost } : {}),
  };
}

export async function startSandbox(networks: readonly NetworkName[], settlementTimeoutMs: number, options: SandboxOptions = {}): Promise<Sandbox> {
  const started = await Promise.allSettled(
    networks.map((name, index) =>
      NETWORKS[name].family === 'evm'
        ? startEvmChain(name, settlementTimeoutMs, options, chainListen(options, index))
        : startSvmChain(name, settlementTimeoutMs, chainListen(options, index), options.stateDir),
    ),
  );
  const chains = new Map<NetworkName, SandboxChain>();
  for (const outcome of started) if (outcome.status === 'fulfilled') chains.set(outcome.value.network, outcome.value);
  const failure = started.find((outcome) => outcome.status === 'rejected');
  if (failure) {
    await Promise.all([...chains.values()].map((chain) => chain.stop()));
    throw failure.reason;
  }

  const sandboxChain = (network: string): SandboxChain => {
    const chain = chains.get(network as NetworkName);
    if (!chain) {
      throw new ApiError(400, 'unsupported_network', `network: "${network}" is not a sandbox network (sandbox: ${[...chains.keys()].join(', ')})`, {
        field: 'network',
      });
    }
    return chain;
  };
  const routes = new Hono();
  routes.post('/sandbox/faucet', async (c) => {
    const request = parseOrThrow(faucetRequest, await c.req.json().catch(() => undefined));
    const chain = sandboxChain(request.network);
    const amount = request.amount === undefined ? undefined : BigInt(request.amount);
    const funded = await chain.faucet(request.address, amount);
    return c.json({ network: chain.network, address: request.address, asset: chain.asset, ...funded });
  });
  // the test USDC an address holds (atomic units), for pages that cannot reach the chain's RPC themselves
  routes.get('/sandbox/balance', async (c) => {
    const request = parseOrThrow(balanceRequest, c.req.query());
    const chain = sandboxChain(request.network);
    const valid = NETWORKS[chain.network].family === 'evm' ? /^0x[0-9a-fA-F]{40}$/ : /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
    if (!valid.test(request.address)) throw new ApiError(400, 'invalid_request', 'address: not an address of this network', { field: 'address' });
    const balance = await chain.balanceOf(request.address);
    return c.json({ network: chain.network, address: request.address, asset: chain.asset, balance: balance.toString() });
  });

  return {
    chains,
    routes,
    health: () => ({
      sandbox: true,
      warning: 'SANDBOX MODE: local chains with test USDC; no real funds move',
      sandboxNetworks: Object.fromEntries(
        [...chains.values()].map((chain) => [chain.network, { rpcUrl: chain.publicRpcUrl, asset: chain.asset, payTo: chain.payTo }]),
      ),
    }),
    stop: async () => {
      await Promise.all([...chains.values()].map((chain) => chain.stop()));
    },
  };
}
