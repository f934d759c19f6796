// Permit2 and the upto proxy on a sandbox chain are what the official client signs for: the real Permit2
// code, with the domain a deployment at its canonical address on this chain would have.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createTestClient, createWalletClient, hashDomain, http, keccak256, parseAbi, parseEther, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NETWORKS, type EvmNetwork } from '../../x402/networks.ts';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from '../../x402/upto.ts';
import { startEvmSandbox, type EvmSandbox } from './evm-sandbox.ts';
import { loadPermit2Artifact, loadUptoProxyArtifact, permit2RuntimeCode } from './upto-contracts.ts';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const polygon = NETWORKS.polygon as EvmNetwork;
let sandbox: EvmSandbox;

before(async () => {
  sandbox = await startEvmSandbox(polygon);
});
after(() => sandbox.stop());

test("Permit2 at its canonical address answers with the domain of this chain and that address", async () => {
  const client = createPublicClient({ transport: http(sandbox.rpcUrl) });
  const separator = await client.readContract({
    address: PERMIT2_ADDRESS,
    abi: parseAbi(['function DOMAIN_SEPARATOR() view returns (bytes32)']),
    functionName: 'DOMAIN_SEPARATOR',
  });
  const expected = hashDomain({
    domain: { name: 'Permit2', chainId: BigInt(polygon.chainId), verifyingContract: PERMIT2_ADDRESS },
    types: { EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }] },
  });
  assert.equal(separator, expected);
});

test('the code laid at the canonical address is byte for byte what Permit2\'s constructor leaves', async () => {
  // deploy the creation code for real, anywhere, and compare with the code computed for that address
  const deployer = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), mode: 'anvil' }).setBalance({
    address: deployer.address,
    value: parseEther('10'),
  });
  const wallet = createWalletClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl), account: deployer });
  const client = createPublicClient({ chain: sandbox.chain, transport: http(sandbox.rpcUrl) });
  const artifact = loadPermit2Artifact();
  const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode });
  const { contractAddress } = await client.waitForTransactionReceipt({ hash });
  assert.ok(contractAddress);
  const deployed = await client.getCode({ address: contractAddress });
  assert.equal(deployed, permit2RuntimeCode(polygon.chainId, contractAddress));
  // and the copy at the canonical address differs from it only by the domain it caches
  assert.notEqual(await client.getCode({ address: PERMIT2_ADDRESS }), deployed);
  assert.equal(await client.getCode({ address: PERMIT2_ADDRESS }), permit2RuntimeCode(polygon.chainId));
});

test('the upto proxy points at Permit2 and binds the witness x402 signs', async () => {
  const client = createPublicClient({ transport: http(sandbox.rpcUrl) });
  const abi = parseAbi([
    'function PERMIT2() view returns (address)',
    'function WITNESS_TYPEHASH() view returns (bytes32)',
    'function WITNESS_TYPE_STRING() view returns (string)',
  ]);
  assert.equal(await client.readContract({ address: UPTO_PROXY_ADDRESS, abi, functionName: 'PERMIT2' }), PERMIT2_ADDRESS);
  assert.equal(
    await client.readContract({ address: UPTO_PROXY_ADDRESS, abi, functionName: 'WITNESS_TYPEHASH' }),
    keccak256(toHex('Witness(address to,address facilitator,uint256 validAfter)')),
  );
  assert.equal(
    await client.readContract({ address: UPTO_PROXY_ADDRESS, abi, functionName: 'WITNESS_TYPE_STRING' }),
    'Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)',
  );
});

test('the committed proxy artifact was built from the current contract source', () => {
  const source = readFileSync(new URL('../../../contracts/UptoPermit2Proxy.sol', import.meta.url), 'utf8');
  assert.equal(
    loadUptoProxyArtifact().sourceSha256,
    createHash('sha256').update(source, 'utf8').digest('hex'),
    'stale artifact: run `npx node scripts/compile-contracts.ts`',
  );
});
