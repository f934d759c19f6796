// Time to first token and total time of a paid chat, streamed vs not, in the same run: the embedded llama.cpp
// model behind the real gateway on the sandbox chain, each call paid by x402-fetch 1.x (its 402 round trip,
// signing, verification and settlement included). Run: npx node bench/streaming.ts [calls per mode, default 10]
import { wrapFetchWithPayment } from 'x402-fetch';
import { startTestService } from '../test/support/service.ts';
import { fundedEvmBuyer } from '../test/support/sandbox-wallet.ts';

const calls = Number(process.argv[2] ?? 10);
const service = await startTestService({ networks: ['base'] });
try {
  const pay = wrapFetchWithPayment(fetch, await fundedEvmBuyer(service, ['base'], 100_000_000n)) as typeof fetch;
  const body = (stream: boolean) => ({ model: 'local/demo-bigram', messages: [{ role: 'user', content: 'Tell me about the sea' }], max_tokens: 128, stream });
  const once = async (stream: boolean) => {
    const started = performance.now();
    const response = await pay(`${service.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Network': 'base' },
      body: JSON.stringify(body(stream)),
    });
    if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
    let first: number | undefined;
    const decoder = new TextDecoder();
    for await (const bytes of response.body!) {
      // the first content delta (the role chunk carries no text)
      if (first === undefined && (!stream || /"content":"[^"]/.test(decoder.decode(bytes)))) first = performance.now() - started;
    }
    return { first: first ?? NaN, total: performance.now() - started };
  };
  await once(false); // load the model once, outside the measures
  const results: Record<string, { first: number[]; total: number[] }> = { plain: { first: [], total: [] }, streamed: { first: [], total: [] } };
  for (let i = 0; i < calls; i++) {
    for (const stream of i % 2 ? [true, false] : [false, true]) {
      const { first, total } = await once(stream);
      const row = results[stream ? 'streamed' : 'plain']!;
      row.first.push(first);
      row.total.push(total);
    }
  }
  const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1);
  console.log(`paid /v1/chat/completions, local/demo-bigram, max_tokens 128, ${calls} calls per mode (interleaved), p50 ms`);
  console.log('mode      first token   total');
  for (const [mode, row] of Object.entries(results)) console.log(`${mode.padEnd(9)} ${p50(row.first).padStart(11)} ${p50(row.total).padStart(7)}`);
} finally {
  await service.stop();
}
