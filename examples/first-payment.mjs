// One paid chat from code, with the official x402 client (@x402/fetch and @x402/evm, installed by npm install)
// and the key `x402-ai wallet new --out` saved. Run it inside the clone with the clone's Node 24:
//   node_modules/.bin/node examples/first-payment.mjs ~/x402-buyer.key
import { readFileSync } from 'node:fs';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

const gateway = process.env.X402_AI_URL ?? 'http://127.0.0.1:4021';
const buyer = privateKeyToAccount(readFileSync(process.argv[2], 'utf8').trim());
const pay = wrapFetchWithPayment(fetch, registerExactEvmScheme(new x402Client(), { signer: buyer }));

const response = await pay(`${gateway}/api/v1/ai/chat`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
  body: JSON.stringify({ model: 'local/demo-bigram', prompt: 'Hello' }),
});
console.log(response.status, await response.json());
const receipt = response.headers.get('PAYMENT-RESPONSE');
if (receipt) console.log('paid, transaction', decodePaymentResponseHeader(receipt).transaction);
