// Sends transactions from one settlement key, one at a time, so concurrent settlements never share a
// nonce. The hash is known before sending, so a transport failure mid-send is reported as uncertain with
// that hash, never as a false rejection.
import { keccak256, type Account, type Address, type Chain, type Hex, type PublicClient, type Transport, type WalletClient } from 'viem';
import { isNodeRejection } from './evm-errors.ts';

export interface TransactionRequest {
  to: Address;
  data?: Hex;
  value?: bigint;
  gas?: bigint;
}

export type SendResult =
  /** the node accepted it */
  | { status: 'broadcast'; transaction: Hex }
  /** certainly not sent: it could not be prepared (e.g. gas estimation reverted), or the node refused it */
  | { status: 'rejected'; error: unknown }
  /** it may have reached the node */
  | { status: 'uncertain'; transaction: Hex; error: unknown };

export interface TransactionSender {
  readonly address: Address;
  send(request: TransactionRequest): Promise<SendResult>;
}

export class SerialTransactionSender implements TransactionSender {
  readonly #public: PublicClient<Transport, Chain>;
  readonly #wallet: WalletClient<Transport, Chain, Account>;
  #queue: Promise<unknown> = Promise.resolve();
  #nextNonce: number | undefined;

  constructor(publicClient: PublicClient<Transport, Chain>, wallet: WalletClient<Transport, Chain, Account>) {
    this.#public = publicClient;
    this.#wallet = wallet;
  }

  get address(): Address {
    return this.#wallet.account.address;
  }

  send(request: TransactionRequest): Promise<SendResult> {
    const run = () => this.#sendNow(request);
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #sendNow(request: TransactionRequest): Promise<SendResult> {
    let serialized: Hex;
    let nonce: number;
    try {
      const pending = await this.#public.getTransactionCount({ address: this.address, blockTag: 'pending' });
      nonce = Math.max(pending, this.#nextNonce ?? 0);
      const prepared = await this.#wallet.prepareTransactionRequest({ ...request, nonce });
      serialized = await this.#wallet.signTransaction(prepared);
    } catch (error) {
      return { status: 'rejected', error };
    }
    const transaction = keccak256(serialized);
    try {
      await this.#public.sendRawTransaction({ serializedTransaction: serialized });
      this.#nextNonce = nonce + 1;
      return { status: 'broadcast', transaction };
    } catch (error) {
      // Trust our own eyes over the error: if the node has the transaction, it was broadcast.
      const known = await this.#public.getTransaction({ hash: transaction }).then(
        () => true,
        () => false,
      );
      if (known) {
        this.#nextNonce = nonce + 1;
        return { status: 'broadcast', transaction };
      }
      this.#nextNonce = undefined; // re-read the nonce from the chain next time
      return isNodeRejection(error) ? { status: 'rejected', error } : { status: 'uncertain', transaction, error };
    }
  }
}
