// An upstream AI provider the catalog's models may be served by.
import { z } from 'zod';
import { milliseconds } from './duration.ts';

export const upstreamProvider = z.object({
  /**
   * the wire protocol: openai-compatible (OpenAI, OpenRouter, Together, Groq, vLLM, Ollama, ...: chat, images,
   * speech) or anthropic (Anthropic's Messages API, e.g. https://api.anthropic.com/v1: chat only)
   */
  type: z.enum(['openai-compatible', 'anthropic']),
  baseURL: z.url(),
  /** name of the environment variable holding the API key */
  apiKeyEnv: z.string().optional(),
  timeoutMs: milliseconds().default(60_000),
  maxRetries: z.number().int().min(0).max(5).default(2),
  /** largest upstream response accepted, API answers and images fetched from URLs the upstream returns */
  maxResponseBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
});
