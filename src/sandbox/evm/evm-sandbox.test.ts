import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NETWORKS, type EvmNetwork } from '../../x402/networks.ts';
import { FAUCET_NATIVE_FLOOR, startEvmSandbox, type EvmSandbox } from './evm-sandbox.ts';

const baseSepolia = NETWORKS['base-sepolia'] as EvmNetwork;
let sandbox: EvmSandbox;

before(async () => {
  sandbox = await startEvmSandbox(baseSepolia);
});
after(() => sandbox.stop());

test('the sandbox runs the real chain id and a TestUSDC with the network EIP-712 domain', async () => {
  assert.equal(sandbox.network, 'base-sepolia');
  assert.equal(sandbox.chainId, 84532);
  assert.deepEqual(sandbox.eip712, { name: 'USDC', version: '2' });
  assert.match(sandbox.settlementPrivateKey, /^0x[0-9a-f]{64}$/);
  assert.notEqual(sandbox.payTo, sandbox.settlementAddress);

  const client = createPublicClient({ transport: http(sandbox.rpcUrl) });
  assert.equal(await client.getChainId(), 84532);
  const domain = await client.readContract({
    address: sandbox.asset,
    abi: parseAbi([
      'function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])',
    ]),
    functionName: 'eip712Domain',
  });
  assert.deepEqual(domain.slice(0, 5), ['0x0f', 'USDC', '2', 84532n, sandbox.asset]);
  assert.ok((await client.getBalance({ address: sandbox.settlementAddress })) > 0n, 'settlement key pays gas');
});

test('the faucet mints test USDC and gas, and balances read back', async () => {
  const payer = privateKeyToAccount(generatePrivateKey()).address;
  assert.equal(await sandbox.balanceOf(payer), 0n);

  assert.deepEqual(await sandbox.faucet(payer), { balance: 100_000_000n, nativeBalance: FAUCET_NATIVE_FLOOR });
  const second = await sandbox.faucet(payer, 2_500_000n);
  assert.equal(second.balance, 102_500_000n);
  assert.equal(await sandbox.balanceOf(payer), 102_500_000n);
});

test('concurrent faucet calls all land', async () => {
  const accounts = Array.from({ length: 5 }, () => privateKeyToAccount(generatePrivateKey()).address);
  const results = await Promise.all(accounts.map((a) => sandbox.faucet(a, 1_000_000n)));
  assert.deepEqual(results.map((r) => r.balance), [1_000_000n, 1_000_000n, 1_000_000n, 1_000_000n, 1_000_000n]);
});

test('the faucet refuses silly amounts', async () => {
  const payer = privateKeyToAccount(generatePrivateKey()).address;
  await assert.rejects(sandbox.faucet(payer, 0n), RangeError);
  await assert.rejects(sandbox.faucet(payer, 1_000_000_000_001n), RangeError);
});
