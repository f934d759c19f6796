// Everything a paying process (`x402-ai proxy`, `x402-ai mcp`) builds from the buyer's key and options, checked
// before it takes a call: the spend file and caps, the payment policy, the official client of each scheme (with the
// fast signer), the payment-channel lanes; and the refund of those channels.
import { createPublicClient, http } from 'viem';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { SchemeNetworkClient } from '@x402/core/types';
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import { BATCH_SETTLEMENT_SCHEME } from '../../x402/batch-settlement.ts';
import { balanceRpcUrl } from '../balance.ts';
import { failureReason } from '../reach.ts';
import { solanaSigner, type SolanaSecretKey } from '../solana-key.ts';
import { solanaRpcUrls } from '../solana-rpc.ts';
import { Budget } from './budget.ts';
import type { Caps } from './caps.ts';
import { ChannelLanes, laneSalt, type LaneOwner, type RefundOutcome } from './channel-lanes.ts';
import { fastEvmSigner } from '../fast-signer.ts';
import { libsecp256k1Account } from '../../x402/libsecp256k1-account.ts';
import { Payer } from './payer.ts';
import { ChainOutcomes } from './chain-outcomes.ts';
import { svmChainReader } from './svm-chain-reader.ts';
import { PaymentPolicy, SCHEMES, type SchemeName } from './payment-policy.ts';
import { SpendLog } from './spend-log.ts';
import type { Hex } from 'viem';

export interface PayingBuyerOptions {
  /** the gateway's URL, no trailing slash */
  gateway: string;
  network: NetworkName;
  evmPrivateKey?: Hex;
  solanaSecretKey?: SolanaSecretKey;
  /** the chain's JSON-RPC (default: the sandbox chain a sandbox gateway reports, else the network's public one) */
  rpcUrl?: string;
  caps: Caps;
  spendFile: string;
  payTo?: string;
  scheme?: SchemeName;
  /** payment channels open at once at most */
  channels: number;
  deposit?: bigint;
  owner: LaneOwner;
  fetch?: typeof fetch;
}

export interface PayingBuyer {
  address: string;
  budget: Budget;
  payer: Payer;
  /** returns what the payment channels hold unspent to the wallet (each refund recorded in the spend file) */
  refund(): Promise<RefundOutcome>;
  /** asks the chain what became of the payments whose outcome was not seen (chain-outcomes.ts) */
  settleUnknown(): Promise<void>;
  close(): void;
}

/** how often the chain is asked about payments whose outcome was not seen, while some wait */
const UNKNOWN_OUTCOMES_EVERY_MS = 30_000;

/** The gateway answers at all (any status): else nothing can be paid, and its chain is not known. */
async function reachable(gateway: string, doFetch: typeof fetch): Promise<void> {
  try {
    await (await doFetch(`${gateway}/healthz`, { signal: AbortSignal.timeout(10_000) })).arrayBuffer();
  } catch (error) {
    throw new Error(`cannot reach the gateway at ${gateway} (${failureReason(error)}): start it first, or name its chain with --rpc-url`, { cause: error });
  }
}

export async function payingBuyer(options: PayingBuyerOptions): Promise<PayingBuyer> {
  const { network } = options;
  const facts = NETWORKS[network];
  const doFetch = options.fetch ?? fetch;
  // which chain to read (a sandbox gateway's own, else the public one) is the gateway's to say: it must answer first
  if (!options.rpcUrl) await reachable(options.gateway, doFetch);
  const budget = new Budget(new SpendLog(options.spendFile), options.caps);
  const clients: Partial<Record<Exclude<SchemeName, 'batch-settlement'>, SchemeNetworkClient>> = {};
  let lanes: ChannelLanes | undefined;
  let outcomes: ChainOutcomes | undefined;
  let address: string;
  let signable: readonly SchemeName[];

  if (facts.family === 'evm') {
    if (!options.evmPrivateKey) throw new Error(`paying on ${network} needs an EVM key (X402_EVM_PRIVATE_KEY or --key-file)`);
    const rpcUrl = await balanceRpcUrl(network, { rpcUrl: options.rpcUrl, baseUrl: options.gateway, fetch: doFetch });
    const chain = createPublicClient({ transport: http(rpcUrl, { retryCount: 1 }) });
    const signer = fastEvmSigner(libsecp256k1Account(options.evmPrivateKey), chain);
    outcomes = new ChainOutcomes(budget, chain, network, { url: options.gateway, fetch: doFetch });
    address = signer.address;
    clients.exact = new ExactEvmScheme(signer);
    clients.upto = new UptoEvmScheme(signer, { rpcUrl });
    lanes = new ChannelLanes({ signer, budget, network, owner: options.owner, maxLanes: options.channels, ...(options.deposit === undefined ? {} : { deposit: options.deposit }) });
    signable = SCHEMES;
  } else {
    if (options.solanaSecretKey === undefined) throw new Error(`paying on ${network} needs a Solana key (X402_SOLANA_SECRET_KEY or --key-file)`);
    const signer = await solanaSigner(options.solanaSecretKey);
    const rpcUrl = (await solanaRpcUrls({ baseUrl: options.gateway, ...(options.rpcUrl ? { rpcUrl: options.rpcUrl } : {}), fetch: doFetch }))[network]!;
    outcomes = new ChainOutcomes(budget, svmChainReader(rpcUrl), network);
    address = signer.address;
    clients.exact = new ExactSvmScheme(signer, { rpcUrl });
    signable = ['exact'];
  }
  if (options.scheme && !signable.includes(options.scheme)) throw new Error(`--scheme ${options.scheme} cannot be paid on ${network} (it takes: ${signable.join(', ')})`);
  const policy = new PaymentPolicy({ budget, gateway: options.gateway, network, signable, ...(options.payTo ? { payTo: options.payTo } : {}), ...(options.scheme ? { scheme: options.scheme } : {}) });
  const payer = new Payer({ budget, policy, network, clients, ...(lanes ? { lanes } : {}), ...(outcomes ? { outcomes } : {}) });
  // what an earlier process left unknown is asked about at once, then every so often while anything waits
  const settleUnknown = async () => {
    if (outcomes?.waiting) await outcomes.settle();
  };
  void settleUnknown();
  const asking = setInterval(() => void settleUnknown(), UNKNOWN_OUTCOMES_EVERY_MS).unref();

  async function refund() {
    if (!lanes) return { refunds: [], failures: [] };
    // any paid URL takes a refund: a GET naming the network is answered with the channel offer
    const url = `${options.gateway}/v1/chat/completions`;
    const withNetwork: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('X-Network', network);
      return doFetch(input, { ...init, headers });
    };
    const probe = await withNetwork(url, { method: 'GET' });
    const header = probe.headers.get('PAYMENT-REQUIRED');
    await probe.arrayBuffer();
    const offer = header ? decodePaymentRequiredHeader(header).accepts.find((accept) => accept.scheme === BATCH_SETTLEMENT_SCHEME) : undefined;
    if (!offer) throw new Error(`the gateway at ${options.gateway} offers no payment channel on ${network}: nothing to refund there`);
    const state = budget.refresh();
    const salts = new Set<Hex>([laneSalt(options.owner, 0)]);
    for (const escrow of state.escrows.values()) if (escrow.network === network && escrow.salt) salts.add(escrow.salt as Hex);
    const outcome = await lanes.refundAll(offer, url, withNetwork, salts);
    for (const refunded of outcome.refunds) {
      budget.record({ kind: 'refund', at: budget.now(), amount: refunded.amount.toString(), network, channel: refunded.channel, transaction: refunded.transaction });
    }
    return outcome;
  }

  const close = () => {
    clearInterval(asking);
    budget.log.close();
  };
  return { address, budget, payer, refund, settleUnknown, close };
}
