// The chat model bench/serve.ts adds when BENCH_UPSTREAM_URL names a mock upstream (bench/mock-upstream.ts): an
// OpenAI-compatible provider's model, priced as bench/upstream-overhead.ts prices its own.
import type { ModelConfig } from '../src/config/schema.ts';

export const MOCK_CHAT_MODEL = {
  id: 'mock/chat',
  provider: 'mock',
  upstreamModel: 'bench-chat',
  capability: 'chat',
  maxTokens: 256,
  defaultMaxTokens: 64,
  price: { perRequest: '1000', perThousandOutputTokens: '2000', perThousandInputChars: '100' },
} as const satisfies Partial<ModelConfig>;
