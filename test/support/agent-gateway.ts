// A sandbox gateway on base with a chat model behind each kind of upstream, beside the embedded ones: `up/openai`
// served by a local server speaking OpenAI's Chat Completions, `up/anthropic` by one speaking Anthropic's Messages
// API (agent-upstreams.ts; given a file, they play a coding agent's model). `model` sets what both entries say
// beyond their defaults (limits, supports, price).
import { startTestService } from './service.ts';
import { startAnthropicAgentUpstream, startOpenAIAgentUpstream, type AgentUpstream } from './agent-upstreams.ts';
import { embeddedModels } from '../../src/config/embedded-models.ts';
import type { RunningService } from '../../src/service.ts';

export const UP_OPENAI = 'up/openai';
export const UP_ANTHROPIC = 'up/anthropic';

export interface AgentGateway {
  service: RunningService;
  openaiUp: AgentUpstream;
  anthropicUp: AgentUpstream;
  stop(): Promise<void>;
}

export async function startAgentGateway(options: { script?: { file: string }; model?: Record<string, unknown> } = {}): Promise<AgentGateway> {
  const [openaiUp, anthropicUp] = await Promise.all([startOpenAIAgentUpstream(options.script), startAnthropicAgentUpstream(options.script)]);
  const model = (id: string, provider: string, upstreamModel: string) => ({
    id,
    provider,
    upstreamModel,
    capability: 'chat' as const,
    maxTokens: 4096,
    defaultMaxTokens: 256,
    price: { perRequest: '1000', perThousandOutputTokens: '200', perThousandInputChars: '10' },
    ...options.model,
  });
  const service = await startTestService({
    networks: ['base'],
    config: {
      providers: {
        oa: { type: 'openai-compatible', baseURL: openaiUp.baseURL, timeoutMs: 30_000, maxRetries: 0 },
        an: { type: 'anthropic', baseURL: anthropicUp.baseURL, timeoutMs: 30_000, maxRetries: 0 },
      },
      models: [...embeddedModels(), model(UP_OPENAI, 'oa', 'gpt-test'), model(UP_ANTHROPIC, 'an', 'claude-sonnet-4-5')],
    },
  });
  return {
    service,
    openaiUp,
    anthropicUp,
    async stop() {
      await service.stop();
      await Promise.all([openaiUp.close(), anthropicUp.close()]);
    },
  };
}
