// Payment channels with Permit2 deposits (`channels.depositMethod: "permit2"`, for tokens without ERC-3009): the
// 402 asks for them (`extra.assetTransferMethod`) and declares EIP-2612 gas sponsoring, so the unmodified official
// client, holding no Permit2 allowance, signs a Permit2 witness transfer and an EIP-2612 permit for Permit2; the
// facilitator submits both with the deposit through the escrow's Permit2 collector. Vouchers and the refund
// follow as with ERC-3009 deposits. Balances read on-chain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { toClientEvmSigner } from '@x402/evm';
import { createPublicClient, erc20Abi, http, type Hex } from 'viem';
import { startTestService, postJson } from './support/service.ts';
import { balanceOf, fundedEvmBuyer, decodeHeader as decode } from './support/sandbox-wallet.ts';
import type { RunningService } from '../src/service.ts';
import { PERMIT2_ADDRESS } from '../src/x402/upto.ts';

const IMAGE = { path: '/api/v1/ai/images', body: { prompt: 'a red fox', n: 1, size: '256x256' } };

let service: RunningService;
before(async () => {
  service = await startTestService({ networks: ['base'], config: { channels: { depositMethod: 'permit2' } } });
});
after(() => service.stop());

const chain = () => createPublicClient({ transport: http(service.sandbox!.chains.get('base')!.rpcUrl) });

test('the 402 asks for Permit2 deposits and declares EIP-2612 gas sponsoring', async () => {
  const response = await postJson(`${service.url}${IMAGE.path}`, IMAGE.body, { 'X-Network': 'base' });
  const required = decode(response.headers.get('PAYMENT-REQUIRED'));
  const offer = required.accepts.find((a: { scheme: string }) => a.scheme === 'batch-settlement');
  assert.equal(offer.extra.assetTransferMethod, 'permit2');
  assert.ok(required.extensions?.eip2612GasSponsoring, 'the EIP-2612 declaration');
});

test('a payer without a Permit2 allowance deposits by Permit2 and an EIP-2612 permit, pays by vouchers, and is refunded the rest', async () => {
  const buyer = await fundedEvmBuyer(service, ['base'], 20_000_000n);
  const asset = service.rails.get('base')!.asset as Hex;
  assert.equal(await chain().readContract({ address: asset, abi: erc20Abi, functionName: 'allowance', args: [buyer.address, PERMIT2_ADDRESS] }), 0n);
  const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(buyer, chain()), { depositStrategy: () => '5000000' });
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:8453', scheme));
  const call = () => pay(`${service.url}${IMAGE.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Network': 'base' }, body: JSON.stringify(IMAGE.body) });
  const before = await balanceOf(service, 'base', buyer.address);

  let charged = 0n;
  for (let i = 0; i < 3; i++) {
    const response = await call();
    assert.equal(response.status, 200, await response.clone().text());
    const receipt = decode(response.headers.get('PAYMENT-RESPONSE'));
    if (i === 0) {
      assert.match(receipt.transaction, /^0x[0-9a-f]{64}$/, 'the deposit');
      assert.equal((await chain().getTransactionReceipt({ hash: receipt.transaction })).status, 'success');
    } else {
      assert.equal(receipt.transaction, '', 'vouchers send nothing');
    }
    charged += BigInt(receipt.extra.chargedAmount);
  }
  assert.equal(await balanceOf(service, 'base', buyer.address), before - 5_000_000n, 'the deposit left the payer through Permit2');

  const withNetwork: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-Network': 'base' } });
  const refund = await scheme.refund(`${service.url}${IMAGE.path}`, { fetch: withNetwork });
  assert.equal(refund.success, true);
  assert.equal(await balanceOf(service, 'base', buyer.address), before - charged, 'all but the charges came back');
});
