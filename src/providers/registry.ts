// Turns a catalog entry into an AI SDK model. Upstream providers are config entries (OpenAI-compatible
// covers OpenAI, OpenRouter, Together, Groq, vLLM, Ollama, llama.cpp server, LocalAI); the embedded
// engines implement the same AI SDK interfaces, so the generation code never knows which it got.
import { createOpenAI } from '@ai-sdk/openai';
import type { ImageModel, LanguageModel, SpeechModel } from 'ai';
import type { ChatModelConfig, ImageModelConfig, ModelConfig, SpeechModelConfig } from '../config/schema.ts';
import type { Config } from '../config/load.ts';

/** The embedded engines, keyed by the provider names the catalog uses. */
export interface LocalEngines {
  chat(model: ChatModelConfig): LanguageModel;
  image(model: ImageModelConfig): ImageModel;
  speech(model: SpeechModelConfig): SpeechModel;
}

export const LOCAL_PROVIDERS = { chat: 'local-llama', image: 'local-preview', speech: 'local-espeak' } as const;

export interface CallSettings {
  timeoutMs: number;
  maxRetries: number;
  /** key under which `options` are passed as AI SDK providerOptions */
  providerOptionsKey: string;
}

export class ProviderRegistry {
  private readonly config: Config;
  private readonly local: LocalEngines;
  private readonly upstreams = new Map<string, ReturnType<typeof createOpenAI>>();

  constructor(config: Config, local: LocalEngines) {
    this.config = config;
    this.local = local;
  }

  private upstream(name: string): ReturnType<typeof createOpenAI> {
    let provider = this.upstreams.get(name);
    if (!provider) {
      const settings = this.config.providers[name];
      if (!settings) throw new Error(`provider ${name} is not configured`);
      const apiKey = settings.apiKeyEnv ? process.env[settings.apiKeyEnv] : undefined;
      // Compatible servers often need no key; the SDK insists on one, so send a harmless placeholder.
      provider = createOpenAI({ baseURL: settings.baseURL, apiKey: apiKey ?? 'not-needed', name });
      this.upstreams.set(name, provider);
    }
    return provider;
  }

  settings(model: ModelConfig): CallSettings {
    const upstream = this.config.providers[model.provider];
    return upstream
      ? { timeoutMs: upstream.timeoutMs, maxRetries: upstream.maxRetries, providerOptionsKey: model.provider }
      : { timeoutMs: 120_000, maxRetries: 0, providerOptionsKey: model.provider };
  }

  language(model: ChatModelConfig): LanguageModel {
    if (model.provider === LOCAL_PROVIDERS.chat) return this.local.chat(model);
    // The chat-completions API, not the newer responses API: it is what compatible servers speak.
    return this.upstream(model.provider).chat(model.upstreamModel ?? model.id);
  }

  image(model: ImageModelConfig): ImageModel {
    if (model.provider === LOCAL_PROVIDERS.image) return this.local.image(model);
    return this.upstream(model.provider).image(model.upstreamModel ?? model.id);
  }

  speech(model: SpeechModelConfig): SpeechModel {
    if (model.provider === LOCAL_PROVIDERS.speech) return this.local.speech(model);
    return this.upstream(model.provider).speech(model.upstreamModel ?? model.id);
  }
}
