// A child gateway (sandbox base, info-level logs) whose `up/chat` model's upstream fails every call with a body
// quoting generated content, and an error message quoting the request it got (the prompt), as some upstreams'
// validation errors do: what the log tests read the logs of.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChildService, type ChildService } from './child-service.ts';

export async function startFailingUpstreamGateway(generated: string): Promise<{ gateway: ChildService; stop(): Promise<void> }> {
  const upstream = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const message = `invalid request: ${body.slice(0, 300)}`;
      response.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message, partial: generated } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const gateway = await startChildService({
    logLevel: 'info',
    sandbox: { enabled: true, networks: ['base'] },
    providers: { up: { type: 'openai-compatible', baseURL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, maxRetries: 0 } },
    models: [{ id: 'up/chat', provider: 'up', upstreamModel: 'm', capability: 'chat', maxTokens: 64, defaultMaxTokens: 16, price: { perRequest: '1000', perThousandOutputTokens: '1000', perThousandInputChars: '0' } }],
  });
  return {
    gateway,
    async stop() {
      await gateway.stop();
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    },
  };
}
