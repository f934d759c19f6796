// A sandbox gateway on base whose `up/tools` chat model (vision included) is served by the local tool upstream
// (tool-upstream.ts), beside the embedded models: what the agent-chat surface tests pay through.
import { startTestService } from './service.ts';
import { startToolUpstream, type ToolUpstream } from './tool-upstream.ts';
import { embeddedModels } from '../../src/config/embedded-models.ts';
import type { RunningService } from '../../src/service.ts';

export const UP_TOOLS = 'up/tools';

export async function startToolGateway(): Promise<{ upstream: ToolUpstream; service: RunningService; stop(): Promise<void> }> {
  const upstream = await startToolUpstream();
  const service = await startTestService({
    networks: ['base'],
    config: {
      providers: { tools: { type: 'openai-compatible', baseURL: upstream.baseURL, timeoutMs: 30_000, maxRetries: 0 } },
      models: [
        ...embeddedModels(),
        {
          id: UP_TOOLS,
          provider: 'tools',
          upstreamModel: 'tool-model-1',
          capability: 'chat',
          maxTokens: 256,
          defaultMaxTokens: 64,
          supports: { vision: true },
          price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
        },
      ],
    },
  });
  return {
    upstream,
    service,
    async stop() {
      await service.stop();
      await upstream.close();
    },
  };
}
