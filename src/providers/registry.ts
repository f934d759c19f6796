// Turns a catalog entry into an AI SDK model. Upstream providers are config entries (OpenAI-compatible
// covers OpenAI, OpenRouter, Together, Groq, vLLM, Ollama, llama.cpp server, LocalAI); the embedded
// engines implement the same AI SDK interfaces, so the generation code never knows which it got.
//
// Chat and images use @ai-sdk/openai-compatible: it passes a model's allowed `options` through as body
// keys (read under the provider's name), and it accepts images answered as `url` as well as `b64_json`,
// downloading the former (same-origin, or resolved public addresses only: public-address.ts) so the bytes are stored and served by us,
// never the upstream URL. A chat model's request is built by that package and sent and read by ours
// (openai-compatible/chat-model.ts: the SDK's fetch, web streams and zod checks cost more than the gateway
// may add to a call). Speech uses @ai-sdk/openai (the compatible package has no speech model), whose
// options are read under the `openai` key only, so they are moved there.
import type { createAnthropic } from '@ai-sdk/anthropic';
import type { createOpenAI } from '@ai-sdk/openai';
import type { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { JSONValue, SpeechModelV4 } from '@ai-sdk/provider';
import type { ImageModel, LanguageModel, SpeechModel } from 'ai';
import type { ChatModelConfig, ImageModelConfig, ModelConfig, SpeechModelConfig } from '../config/schema.ts';
import type { Config } from '../config/load.ts';
import { UpstreamUrlRejectedError, limitedFetch } from './openai-compatible/limited-fetch.ts';
import { guardOtherOrigins, publicOnlyLookup } from './openai-compatible/public-address.ts';
import { createNodeHttpClient, createNodeHttpFetch, type NodeHttpClient } from '../lib/node-http-fetch.ts';
import type { ChatEndpoint } from './openai-compatible/chat-model.ts';
import { loadAnthropicSdk, loadUpstreamSdk, type UpstreamSdk } from './upstream-sdk.ts';
import { optionalSecret } from '../config/secret.ts';
import { perModel } from './per-model.ts';
import { ESPEAK_SPEECH_ENGINE, LLAMA_CHAT_ENGINE, LOCAL_OPTION_SCHEMAS, PREVIEW_IMAGE_ENGINE, type EngineOptionsSchema } from '../config/engines.ts';
import { schemaProblem, type PlanOptions, type SchemaProblem } from './local/answer-plan.ts';
import type { ChatReasoning } from './chat-model.ts';

export type { SchemaProblem };

/** Which parts of a chat request only some providers read reach a model (ProviderRegistry.chatFeatures). */
export interface ChatProviderFeatures {
  /** an effort level (the model's supports.reasoning, on an upstream) */
  effort: boolean;
  /** Anthropic's thinking settings, a budget or adaptive (supports.reasoning, on an Anthropic upstream) */
  thinking: boolean;
  /** Anthropic's cache_control marks on system blocks, messages and tools */
  cacheControl: boolean;
  /** OpenAI's prompt_cache_key */
  promptCacheKey: boolean;
  /** Anthropic's context_management edits */
  contextManagement: boolean;
}

/** A chat call's settings that become provider options (ProviderRegistry.chatCallOptions). */
export interface ChatCallSettings {
  parallelToolCalls?: boolean | undefined;
  responseFormat?: { type: string; strict?: boolean | undefined } | undefined;
  reasoning?: ChatReasoning | undefined;
  promptCacheKey?: string | undefined;
  /** Anthropic's context_management edits, in @ai-sdk/anthropic's words (camelCase) */
  contextManagement?: JSONValue | undefined;
}

/** the effort levels Anthropic's output_config.effort takes */
const ANTHROPIC_EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

/** The embedded engines, keyed by the provider names the catalog uses. */
export interface LocalEngines {
  chat(model: ChatModelConfig): LanguageModel;
  image(model: ImageModelConfig): ImageModel;
  speech(model: SpeechModelConfig): SpeechModel;
}

export const LOCAL_PROVIDERS = {
  chat: LLAMA_CHAT_ENGINE.provider,
  image: PREVIEW_IMAGE_ENGINE.provider,
  speech: ESPEAK_SPEECH_ENGINE.provider,
} as const;

export interface CallSettings {
  timeoutMs: number;
  maxRetries: number;
  /** key under which `options` are passed as AI SDK providerOptions */
  providerOptionsKey: string;
  /** an upstream provider over the network (not an embedded engine): its streams are held to the tokens it was given */
  upstream: boolean;
}

interface Upstream {
  compatible: ReturnType<typeof createOpenAICompatible>;
  /** where its chat completions go, and how (openai-compatible/chat-model.ts) */
  chat: ChatEndpoint;
  openai: ReturnType<typeof createOpenAI>;
  /** the Anthropic Messages API client, for a provider of type anthropic */
  anthropic?: ReturnType<typeof createAnthropic> | undefined;
}

export class ProviderRegistry {
  private readonly config: Config;
  private readonly local: LocalEngines;
  private readonly upstreams = new Map<string, Upstream>();
  /** what every upstream call goes through, under each provider's response cap: one connection pool */
  private readonly http: NodeHttpClient;

  /** what URLs off a provider's own origin go through: public addresses only, connected to as checked */
  private readonly downloads: typeof fetch;

  /** the OpenAI providers' factories: loaded only when the config names an upstream provider */
  private readonly sdk: UpstreamSdk | undefined;

  /** A registry for `config`, with the upstream providers' SDK loaded when it names any. */
  static async create(config: Config, local: LocalEngines, transport?: NodeHttpClient): Promise<ProviderRegistry> {
    const sdk = Object.keys(config.providers).length > 0 ? await loadUpstreamSdk() : undefined;
    if (sdk && Object.values(config.providers).some((provider) => provider.type === 'anthropic')) sdk.createAnthropic = await loadAnthropicSdk();
    return new ProviderRegistry(config, local, transport, sdk);
  }

  constructor(config: Config, local: LocalEngines, transport: NodeHttpClient = createNodeHttpClient(), sdk?: UpstreamSdk) {
    this.config = config;
    this.local = local;
    this.http = transport;
    this.sdk = sdk;
    this.downloads = createNodeHttpFetch({
      lookup: publicOnlyLookup(),
      // what node:http does not cover (a redirect to follow) is never handed to a fetch that resolves again
      fallback: async () => {
        throw new UpstreamUrlRejectedError('upstream URL answered a redirect; not followed');
      },
    });
  }

  private upstream(name: string): Upstream {
    let upstream = this.upstreams.get(name);
    if (!upstream) {
      const settings = this.config.providers[name];
      if (!settings) throw new Error(`provider ${name} is not configured`);
      if (!this.sdk) throw new Error(`provider ${name}: the upstream SDK is not loaded (ProviderRegistry.create loads it)`);
      const { createOpenAI, createOpenAICompatible } = this.sdk;
      const apiKey = settings.apiKeyEnv ? optionalSecret(process.env, settings.apiKeyEnv) : undefined;
      const fetch = limitedFetch(settings.maxResponseBytes, guardOtherOrigins(new URL(settings.baseURL).origin, this.http.fetch, this.downloads));
      upstream = {
        chat: { baseURL: settings.baseURL, apiKey, send: this.http.send, maxResponseBytes: settings.maxResponseBytes },
        // no key: no Authorization header at all (local servers need none)
        compatible: createOpenAICompatible({
          baseURL: settings.baseURL,
          name,
          fetch,
          includeUsage: true,
          // json_schema response formats go through as such (models that cannot are refused first: `supports`)
          supportsStructuredOutputs: true,
          ...(apiKey ? { apiKey } : {}),
        }),
        // the SDK insists on a key; compatible servers often need none, so send a harmless placeholder
        openai: createOpenAI({ baseURL: settings.baseURL, apiKey: apiKey ?? 'not-needed', name, fetch }),
        anthropic:
          settings.type === 'anthropic' && this.sdk.createAnthropic
            ? this.sdk.createAnthropic({ baseURL: settings.baseURL, apiKey: apiKey ?? 'not-needed', name, fetch })
            : undefined,
      };
      this.upstreams.set(name, upstream);
    }
    return upstream;
  }

  /**
   * What the gateway fetches a client's image URLs with: public addresses only, connected to as checked, no
   * redirects (the same guard as an upstream's image URLs). No http(s) URL has the origin "null", so every one
   * takes the guarded path.
   */
  readonly publicFetch: typeof fetch = (input, init) => guardOtherOrigins('null', this.downloads, this.downloads)(input, init);

  settings(model: ModelConfig): CallSettings {
    const upstream = this.config.providers[model.provider];
    return upstream
      ? {
          timeoutMs: upstream.timeoutMs,
          maxRetries: upstream.maxRetries,
          // @ai-sdk/anthropic reads its options under `anthropic` only
          providerOptionsKey: upstream.type === 'anthropic' ? 'anthropic' : model.provider,
          upstream: true,
        }
      : { timeoutMs: 120_000, maxRetries: 0, providerOptionsKey: model.provider, upstream: false };
  }

  /** the schema `options` must fit for this model, when its engine declares one */
  optionsSchema(model: ModelConfig): EngineOptionsSchema | undefined {
    return LOCAL_OPTION_SCHEMAS[model.provider];
  }

  /**
   * Which of the parts of a chat request only some providers read reach this model: the rest are accepted and
   * ignored by the surfaces (and said so in X-Ignored-Fields).
   */
  chatFeatures(model: ChatModelConfig): ChatProviderFeatures {
    const protocol = this.config.providers[model.provider]?.type;
    const reasons = model.supports.reasoning && protocol !== undefined;
    return {
      effort: reasons,
      thinking: reasons && protocol === 'anthropic',
      cacheControl: protocol === 'anthropic',
      promptCacheKey: protocol === 'openai-compatible',
      contextManagement: protocol === 'anthropic',
    };
  }

  /**
   * What a chat call's settings beyond the AI SDK's own become for this model's provider, merged into its
   * providerOptions: Anthropic's options for an Anthropic upstream, body keys for an OpenAI-compatible one;
   * nothing for the embedded engine, which makes one call per answer, always follows the schema and does not
   * think. Only what chatFeatures says the provider reads is passed.
   */
  chatCallOptions(model: ChatModelConfig, call: ChatCallSettings): Record<string, JSONValue> {
    const upstream = this.config.providers[model.provider];
    if (!upstream) return {};
    const features = this.chatFeatures(model);
    const options: Record<string, JSONValue> = {};
    const effort = features.effort ? call.reasoning?.effort : undefined;
    if (upstream.type === 'anthropic') {
      if (call.parallelToolCalls === false) options.disableParallelToolUse = true;
      const thinking = features.thinking ? call.reasoning?.thinking : undefined;
      if (thinking) options.thinking = thinking.type === 'adaptive' && call.reasoning?.display ? { ...thinking, display: call.reasoning.display } : thinking;
      if (effort && ANTHROPIC_EFFORTS.has(effort)) options.effort = effort;
      const management = contextEdits(call.contextManagement, thinking !== undefined && thinking.type !== 'disabled');
      if (management) options.contextManagement = management;
      return options;
    }
    if (call.parallelToolCalls !== undefined) options.parallel_tool_calls = call.parallelToolCalls;
    if (call.responseFormat?.type === 'json_schema') options.strictJsonSchema = call.responseFormat.strict ?? false;
    if (effort) options.reasoningEffort = effort;
    if (call.promptCacheKey) options.prompt_cache_key = call.promptCacheKey;
    return options;
  }

  /**
   * Why the model's engine cannot follow the call's JSON Schemas (tool parameters, or the response schema as
   * `tool: undefined`) within its max_tokens, or undefined when it can. Upstreams judge their own; the embedded
   * engine reads each schema within bounds, decodes under a grammar written from it and checks its answers
   * (providers/local/answer-plan.ts).
   */
  chatSchemaProblem(model: ChatModelConfig, call: PlanOptions & { maxTokens: number }): SchemaProblem | undefined {
    return model.provider === LOCAL_PROVIDERS.chat ? schemaProblem(call) : undefined;
  }

  /** whether one of the embedded engines (this process's own code) serves the model, not an upstream */
  isEmbedded(model: ModelConfig): boolean {
    return (Object.values(LOCAL_PROVIDERS) as string[]).includes(model.provider);
  }

  language(model: ChatModelConfig): LanguageModel {
    if (model.provider === LOCAL_PROVIDERS.chat) return this.local.chat(model);
    return this.upstreamChat(model);
  }

  image(model: ImageModelConfig): ImageModel {
    if (model.provider === LOCAL_PROVIDERS.image) return this.local.image(model);
    return this.upstreamImage(model);
  }

  speech(model: SpeechModelConfig): SpeechModel {
    if (model.provider === LOCAL_PROVIDERS.speech) return this.local.speech(model);
    return this.upstreamSpeech(model);
  }

  // The chat-completions API, not the newer responses API: it is what compatible servers speak.
  private readonly upstreamChat = perModel((model: ChatModelConfig) => {
    const upstream = this.upstream(model.provider);
    const id = model.upstreamModel ?? model.id;
    if (upstream.anthropic) return upstream.anthropic.messages(id);
    return this.sdk!.openAICompatibleChat(upstream.compatible.chatModel(id), upstream.chat);
  });

  private readonly upstreamImage = perModel((model: ImageModelConfig) =>
    this.upstream(model.provider).compatible.imageModel(model.upstreamModel ?? model.id),
  );

  private readonly upstreamSpeech = perModel((model: SpeechModelConfig) =>
    optionsUnderOpenAIKey(this.upstream(model.provider).openai.speech(model.upstreamModel ?? model.id), model.provider),
  );
}

/** Context edits as Anthropic takes them: clearing thinking only where the model thinks (else a 400 there). */
function contextEdits(management: JSONValue | undefined, thinks: boolean): JSONValue | undefined {
  const edits = (management as { edits?: { type?: unknown }[] } | undefined)?.edits;
  if (!edits) return undefined;
  const kept = thinks ? edits : edits.filter((edit) => edit.type !== 'clear_thinking_20251015');
  return kept.length > 0 ? ({ edits: kept } as JSONValue) : undefined;
}

/** @ai-sdk/openai's speech model reads providerOptions.openai only; hand it the options given under `key`. */
function optionsUnderOpenAIKey(inner: SpeechModelV4, key: string): SpeechModelV4 {
  return {
    specificationVersion: inner.specificationVersion,
    provider: inner.provider,
    modelId: inner.modelId,
    doGenerate: (options) => {
      const passed = options.providerOptions?.[key];
      return inner.doGenerate(passed ? { ...options, providerOptions: { ...options.providerOptions, openai: passed } } : options);
    },
  };
}
