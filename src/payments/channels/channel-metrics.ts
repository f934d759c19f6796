// What happens on payment channels, for /metrics: money in (deposits), charged off-chain (vouchers), claimed and
// settled on chain, refunded. Counters per instance in atomic units (Prometheus sums the instances).
import { Counter, type Registry } from 'prom-client';

export interface ChannelObserver {
  deposited(network: string, amount: bigint): void;
  /** one paid call on a channel and its charge */
  charged(network: string, model: string, amount: bigint): void;
  claimed(network: string, amount: bigint): void;
  settled(network: string, amount: bigint): void;
  refunded(network: string, amount: bigint): void;
}

export const NO_CHANNEL_OBSERVER: ChannelObserver = {
  deposited: () => {},
  charged: () => {},
  claimed: () => {},
  settled: () => {},
  refunded: () => {},
};

export class ChannelMetrics implements ChannelObserver {
  private readonly calls: Counter<'network' | 'model'>;
  private readonly amounts: Counter<'network' | 'event'>;

  constructor(registry: Registry) {
    this.calls = new Counter({
      name: 'x402_channel_calls_total',
      help: 'Paid calls on payment channels (x402 batch-settlement): each a voucher, no transaction',
      labelNames: ['network', 'model'],
      registers: [registry],
    });
    this.amounts = new Counter({
      name: 'x402_channel_amount_atomic_total',
      help: 'USDC on payment channels by event, in atomic units (6 decimals): deposited, charged (off-chain), claimed, settled (to payTo), refunded',
      labelNames: ['network', 'event'],
      registers: [registry],
    });
  }

  deposited(network: string, amount: bigint): void {
    this.amounts.inc({ network, event: 'deposited' }, Number(amount));
  }

  charged(network: string, model: string, amount: bigint): void {
    this.calls.inc({ network, model });
    this.amounts.inc({ network, event: 'charged' }, Number(amount));
  }

  claimed(network: string, amount: bigint): void {
    this.amounts.inc({ network, event: 'claimed' }, Number(amount));
  }

  settled(network: string, amount: bigint): void {
    this.amounts.inc({ network, event: 'settled' }, Number(amount));
  }

  refunded(network: string, amount: bigint): void {
    this.amounts.inc({ network, event: 'refunded' }, Number(amount));
  }
}
