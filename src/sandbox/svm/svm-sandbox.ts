// A local Solana for tests and the offline demo: litesvm behind a JSON-RPC server, a test USDC mint
// (6 decimals, SPL Token) placed AT the network's real USDC mint address so 402 bodies name the same
// asset as on the real network, a funded fee payer for the facilitator, an operator wallet (payTo)
// whose token account exists, and a faucet.
import { randomBytes } from 'node:crypto';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  isAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getMintEncoder,
  getMintSize,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { NetworkName, SvmNetwork } from '../../x402/networks.ts';
import { SvmChain, type SvmChainOptions } from './svm-chain.ts';
import { rpcAnswers } from './rpc-server.ts';
import { listenJsonRpc, type JsonRpcAnswer } from './json-rpc-listener.ts';
import { LOCAL_ONLY, type ChainListen } from '../listen.ts';
import { readTokenAccount } from './account-json.ts';
import { svmKeypairFrom, type SvmKeypair } from './keypair.ts';
import { keepKeys, type KeptFiles } from '../kept-state.ts';
import { keptSvmKeys, svmKeptFiles, svmSandboxKeys, type SvmSandboxKeys } from './sandbox-keys.ts';

export interface SvmSandboxOptions extends Omit<SvmChainOptions, 'snapshot'> {
  /** where the JSON-RPC listens and the URL buyers get (default 127.0.0.1, a port the OS picks) */
  listen?: ChainListen;
  /**
   * where the chain's state (a litesvm snapshot, written within a second of a change and at stop) and its keys
   * are kept across restarts (kept-state.ts); absent: nothing is kept
   */
  stateDir?: string;
}

export interface SvmRuntimeOptions extends Omit<SvmChainOptions, 'snapshot'> {
  /** the sandbox's keys (sandbox-keys.ts) */
  keys: SvmSandboxKeys;
  /** where the chain's state and keys are kept (kept-state.ts); absent: nothing is kept */
  files?: KeptFiles;
  /** the keys were kept with a snapshot in `files`: the chain resumes from it */
  kept: boolean;
}

/** How often a changed chain is written to its snapshot. */
const SNAPSHOT_EVERY_MS = 1_000;

export interface SvmFaucetResult {
  /** the owner's test USDC balance after minting (atomic units, 6 decimals) */
  balance: bigint;
  /** its SOL balance (lamports) after the top-up */
  lamports: bigint;
}

/** The chain's runtime with the sandbox's accounts set up, and the answers of its JSON-RPC; not listening. */
export interface SvmRuntime {
  network: NetworkName;
  /** the test USDC mint, at the network's real USDC address */
  asset: Address;
  /** the operator wallet; its USDC associated token account exists from the start */
  payTo: Address;
  /** pays transaction fees for settlements; funded with SOL */
  feePayer: SvmKeypair;
  /**
   * Mints test USDC to the owner's associated token account (created if needed; default 100 USDC,
   * at most 1,000,000 USDC per call) and tops its SOL up to at least 1 SOL.
   */
  faucet(owner: string, amount?: bigint): Promise<SvmFaucetResult>;
  /** USDC atomic units in the owner's associated token account; 0n when it has none */
  balanceOf(owner: string): Promise<bigint>;
  /** jumps the chain ahead; advanceBlocks(151) expires every blockhash handed out so far */
  advanceBlocks(blocks: number): void;
  /** while off, sent transactions are accepted but not executed until mine() */
  setAutomine(enabled: boolean): Promise<void>;
  mine(): Promise<void>;
  /** direct access to the runtime, for tests */
  chain: SvmChain;
  /** what each JSON-RPC request gets */
  answer: JsonRpcAnswer;
  /** writes the last snapshot (when kept) and stops writing */
  stop(): void;
}

/** The runtime served on a JSON-RPC listener. */
export interface SvmSandbox extends Omit<SvmRuntime, 'stop'> {
  /** where this process reaches the JSON-RPC */
  rpcUrl: string;
  /** where a buyer reaches it (listen.publicHost) */
  publicRpcUrl: string;
  /** what /healthz may show about this chain */
  info(): { network: NetworkName; rpcUrl: string; asset: string; payTo: string; feePayer: string };
  stop(): Promise<void>;
}

export const SVM_FAUCET_DEFAULT_AMOUNT = 100_000_000n; // 100 USDC
export const SVM_FAUCET_MAX_AMOUNT = 1_000_000_000_000n; // 1,000,000 USDC
/** Faucet recipients get at least this much SOL, so they can also pay fees themselves. */
export const SVM_FAUCET_LAMPORTS_FLOOR = 1_000_000_000n;
const FEE_PAYER_LAMPORTS = 100_000_000_000n; // 100 SOL
const USDC_DECIMALS = 6;
const MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** Real genesis hashes (the CAIP-2 ids are their first 32 characters). */
const GENESIS_HASHES: Record<string, string> = {
  solana: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  'solana-devnet': 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
};

/** A sandbox chain listening where `options.listen` says, its keys kept under `options.stateDir` or fresh. */
export async function startSvmSandbox(network: SvmNetwork, options: SvmSandboxOptions = {}): Promise<SvmSandbox> {
  const { listen = LOCAL_ONLY, stateDir, ...chainOptions } = options;
  const files = stateDir === undefined ? undefined : svmKeptFiles(stateDir, network);
  const runtime = await openSvmRuntime(network, { ...chainOptions, ...svmSandboxKeys(files), ...(files ? { files } : {}) });
  const server = await listenJsonRpc(listen, runtime.answer);
  return {
    ...runtime,
    rpcUrl: server.url,
    publicRpcUrl: server.publicUrl,
    info: () => ({ network: network.name, rpcUrl: server.publicUrl, asset: runtime.asset, payTo: runtime.payTo, feePayer: runtime.feePayer.address }),
    stop: async () => {
      runtime.stop();
      await server.close();
    },
  };
}

/** The runtime of one sandbox chain: the mint, the funded fee payer and payTo's token account in place. */
export async function openSvmRuntime(network: SvmNetwork, options: SvmRuntimeOptions): Promise<SvmRuntime> {
  const genesisHash = GENESIS_HASHES[network.name];
  if (!genesisHash) throw new Error(`${network.name} is not a Solana network this sandbox knows`);
  const { keys, files, kept, ...chainOptions } = options;
  const chain = new SvmChain({ ...chainOptions, ...(kept && files ? { snapshot: files.state } : {}) });
  const svm = chain.svm;
  const asset = address(network.usdc);

  const setLamports = (owner: Address, floor: bigint): bigint => {
    const account = svm.getAccount(owner as never);
    if (account.exists && account.lamports >= floor) return account.lamports;
    svm.setAccount(
      (account.exists
        ? { ...account, lamports: floor }
        : { address: owner, lamports: floor, data: new Uint8Array(), programAddress: address('11111111111111111111111111111111'), executable: false, space: 0n }) as never,
    );
    return floor;
  };

  const [mintAuthority, feePayer, operator] = await Promise.all(
    [keys.mintAuthority, keys.feePayer, keys.operator].map((key) => svmKeypairFrom(key.secretKey)),
  ) as [SvmKeypair, SvmKeypair, SvmKeypair];
  setLamports(mintAuthority.address, FEE_PAYER_LAMPORTS);
  setLamports(feePayer.address, FEE_PAYER_LAMPORTS);

  // The mint is written straight into the account at the real USDC address; only the sandbox's
  // generated authority can mint.
  const mintData = getMintEncoder().encode({
    mintAuthority: { __option: 'Some', value: mintAuthority.address },
    supply: 0n,
    decimals: USDC_DECIMALS,
    isInitialized: true,
    freezeAuthority: { __option: 'None' },
  });
  // a resumed chain keeps its mint (and its supply)
  if (!kept) svm.setAccount({
    address: asset,
    lamports: svm.minimumBalanceForRentExemption(BigInt(getMintSize())),
    data: new Uint8Array(mintData),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    executable: false,
    space: BigInt(getMintSize()),
  } as never);

  const ataOf = async (owner: Address) =>
    (await findAssociatedTokenPda({ mint: asset, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

  // Sandbox housekeeping goes straight through the runtime (never held back by automine off).
  // A memo nonce keeps two identical mints in one slot from being rejected as duplicates.
  let nonce = 0;
  const execute = async (instructions: Instruction[]): Promise<void> => {
    const memo: Instruction = {
      programAddress: MEMO_PROGRAM,
      data: new TextEncoder().encode(`sandbox ${++nonce} ${randomBytes(4).toString('hex')}`),
    };
    const { blockhash, lastValidBlockHeight } = chain.latestBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(mintAuthority.signer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight }, m),
      (m) => appendTransactionMessageInstructions([...instructions, memo], m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const wire = getBase64Encoder().encode(getBase64EncodedWireTransaction(signed));
    chain.execute(new Uint8Array(wire));
  };

  const createAta = (owner: Address, ata: Address) =>
    getCreateAssociatedTokenIdempotentInstruction({ payer: mintAuthority.signer, ata, owner, mint: asset });

  const payTo = operator.address;
  await execute([createAta(payTo, await ataOf(payTo))]);

  const balanceOf = async (owner: string): Promise<bigint> => {
    if (!isAddress(owner)) throw new RangeError(`not a Solana address: ${owner}`);
    return readTokenAccount(svm, (await ataOf(owner)) as never)?.amount ?? 0n;
  };

  // One faucet transaction at a time: each reads the blockhash and the nonce it needs.
  let queue: Promise<unknown> = Promise.resolve();
  const faucet = (owner: string, amount: bigint = SVM_FAUCET_DEFAULT_AMOUNT): Promise<SvmFaucetResult> => {
    if (!isAddress(owner)) return Promise.reject(new RangeError(`not a Solana address: ${owner}`));
    if (amount <= 0n || amount > SVM_FAUCET_MAX_AMOUNT) {
      return Promise.reject(new RangeError(`faucet amount must be between 1 and ${SVM_FAUCET_MAX_AMOUNT} atomic units`));
    }
    const run = async (): Promise<SvmFaucetResult> => {
      const ata = await ataOf(owner);
      await execute([
        createAta(owner, ata),
        getMintToCheckedInstruction({ mint: asset, token: ata, mintAuthority: mintAuthority.signer, amount, decimals: USDC_DECIMALS }),
      ]);
      const lamports = setLamports(owner, SVM_FAUCET_LAMPORTS_FLOOR);
      return { balance: await balanceOf(owner), lamports };
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };

  // kept: the snapshot is written within a second of a change, and at stop (the keys once, with the first)
  let saved = -1;
  const save = () => {
    if (!files || chain.executed === saved) return;
    saved = chain.executed;
    svm.saveToFile(files.state);
    if (!kept) keepKeys(files, keptSvmKeys(keys));
  };
  save();
  const saver = files ? setInterval(save, SNAPSHOT_EVERY_MS) : undefined;
  saver?.unref();

  return {
    network: network.name,
    asset,
    payTo,
    feePayer,
    faucet,
    balanceOf,
    advanceBlocks: (blocks) => chain.advanceBlocks(blocks),
    setAutomine: async (enabled) => chain.setAutomine(enabled),
    mine: async () => chain.mine(),
    chain,
    answer: rpcAnswers({ chain, genesisHash, mints: [asset] }),
    stop: () => {
      clearInterval(saver);
      save();
    },
  };
}
