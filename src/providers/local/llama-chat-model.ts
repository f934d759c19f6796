// An AI SDK language model (LanguageModelV4, the spec `generateText` / `streamText` of ai@7 call
// natively) running a GGUF model in-process through node-llama-cpp (llama.cpp).
//
// - The GGUF file is loaded lazily on the first call, once; concurrent first calls share the load.
// - One llama.cpp context holds `parallel` sequences; each call takes a free sequence (or waits
//   for one), renders the messages through the model's chat template, generates, clears the
//   sequence and gives it back. Calls on different sequences are batched together by llama.cpp.
// - Usage is counted with the model's own tokenizer: input = tokens of the rendered prompt (chat
//   template and BOS included), output = tokens the model sampled (llama.cpp's token meter of the
//   call's sequence, which the call owns exclusively).
// - No download and no source build ever happens at run time (`build: 'never'`): the native
//   binary comes from the prebuilt @node-llama-cpp/* npm packages.
// - The prompt is cut to the window the context holds (llama-chat-convert.ts): the newest turns, whatever the
//   prompt's size (an agent's first request is 40-90 KB), at a bounded cost per call.
// - Tools and JSON answers by constrained decoding (docs/agent-chat.md): the model samples only tokens a grammar
//   of the client's schema allows, a grammar whose longest answer fits max_tokens (answer-plan.ts,
//   schema/shape-grammar.ts), and the result is checked against the client's schema (schema/schema-validator.ts)
//   before it leaves. Which tool, and when `auto` calls one: answer-plan.ts. The runtime: llama-runtime.ts.

import { access, constants } from 'node:fs/promises';
import { randomBytes, randomInt } from 'node:crypto';
import { engineOptions } from './engine-options.ts';
import { LLAMA_CHAT_ENGINE } from '../../config/engines.ts';
import { answerPlan, jsonBudget, toolCandidates } from './answer-plan.ts';
import { endsWithToolResult } from '../chat-model.ts';
import { clientSchema, type ClientSchema } from './schema/client-schema.ts';
import { acquireSequence, evaluationThreads, getSharedLlama, releaseSequence, type Loaded } from './llama-runtime.ts';
import { convertLlamaUsage, convertToLlamaChatHistory, fitChatHistoryWindow, mapLlamaFinishReason } from './llama-chat-convert.ts';
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
  SharedV4Warning,
} from '@ai-sdk/provider';
import type { ChatHistoryItem, Llama, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';

export interface LlamaChatModelConfig {
  /** model id reported to the AI SDK (the catalog id) */
  modelId: string;
  /** path of the GGUF file */
  modelPath: string;
  /** tokens of context per sequence; capped by the model's training context. Default 2048. */
  contextSize?: number;
  /** how many calls may generate at the same time (llama.cpp sequences). Default 2. */
  parallel?: number;
  /** CPU threads per evaluation; default 1 for tiny models (< 64 MB), else the available cores */
  threads?: number;
  /** used when the call gives no maxOutputTokens. Default 256. */
  defaultMaxOutputTokens?: number;
  /** used when the call gives no temperature. Default 0.7. */
  defaultTemperature?: number;
  /** GPU use: false (CPU only, the default) or 'auto' */
  gpu?: false | 'auto';
  /** called once before loading, e.g. to generate the built-in demo model file */
  prepare?: (modelPath: string) => Promise<unknown>;
}


export class LocalModelLoadError extends Error {
  override name = 'LocalModelLoadError';
}

/** parsed grammars kept per model */
const KEPT_GRAMMARS = 64;
/** tokens of the context always left to the prompt, whatever max_tokens asks */
const MIN_PROMPT_TOKENS = 64;

interface StreamSink {
  text?: (delta: string) => void;
  toolStart?: (id: string, name: string) => void;
  toolDelta?: (id: string, delta: string) => void;
}

interface RunToolCall {
  toolCallId: string;
  toolName: string;
  /** the arguments' JSON text */
  input: string;
}

interface RunResult {
  text: string;
  toolCalls: RunToolCall[];
  finishReason: LanguageModelV4FinishReason;
  usage: LanguageModelV4Usage;
  warnings: SharedV4Warning[];
  /** the stop sequence that ended the answer, if one did (reported as providerMetadata, as @ai-sdk/anthropic does) */
  stopSequence?: string;
}

export class LlamaChatModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4' as const;
  readonly provider = LLAMA_CHAT_ENGINE.provider;
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};

  private readonly config: LlamaChatModelConfig;
  private loading: Promise<Loaded> | undefined;
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(config: LlamaChatModelConfig) {
    this.config = config;
    this.modelId = config.modelId;
  }

  /** Loads the model if needed (once; concurrent callers share the same load). */
  load(): Promise<Loaded> {
    if (!this.loading) {
      this.loading = this.doLoad();
      // a failed load (missing file...) may be retried by a later call
      this.loading.catch(() => {
        this.loading = undefined;
      });
    }
    return this.loading;
  }

  /** Facts about the loaded model (loads it if needed). */
  async info(): Promise<{ contextSize: number; trainContextSize: number; parallel: number; loadMs: number; sizeBytes: number }> {
    const loaded = await this.load();
    return {
      contextSize: loaded.context.contextSize,
      trainContextSize: loaded.model.trainContextSize,
      parallel: loaded.context.totalSequences,
      loadMs: loaded.loadMs,
      sizeBytes: loaded.model.size,
    };
  }

  /** Frees the native model and context; the next call loads again. */
  async dispose(): Promise<void> {
    const loading = this.loading;
    this.loading = undefined;
    if (!loading) return;
    const loaded = await loading.catch(() => undefined);
    if (!loaded) return;
    await loaded.context.dispose();
    await loaded.model.dispose();
  }

  private async doLoad(): Promise<Loaded> {
    const started = performance.now();
    const { modelPath } = this.config;
    if (this.config.prepare) await this.config.prepare(modelPath);
    try {
      await access(modelPath, constants.R_OK);
    } catch {
      throw new LocalModelLoadError(`local chat model ${this.modelId}: GGUF file not found or not readable at ${modelPath}`);
    }
    const llama = await getSharedLlama(this.config.gpu ?? false);
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath });
    } catch (error) {
      throw new LocalModelLoadError(
        `local chat model ${this.modelId}: llama.cpp could not load ${modelPath}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    try {
      const parallel = Math.max(1, this.config.parallel ?? 2);
      const contextSize = Math.min(this.config.contextSize ?? 2048, model.trainContextSize);
      const context = await model.createContext({ contextSize, sequences: parallel, threads: evaluationThreads(this.config.threads, llama, model) });
      const { resolveChatWrapper } = await import('node-llama-cpp');
      const chatWrapper = resolveChatWrapper(model);
      const free: LlamaContextSequence[] = [];
      for (let i = 0; i < parallel; i++) free.push(context.getSequence());
      return { model, context, chatWrapper, free, waiters: [], loadMs: performance.now() - started };
    } catch (error) {
      await model.dispose();
      throw new LocalModelLoadError(
        `local chat model ${this.modelId}: could not create a context: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  private warningsFor(options: LanguageModelV4CallOptions): SharedV4Warning[] {
    const warnings: SharedV4Warning[] = [];
    if (options.reasoning !== undefined && options.reasoning !== 'provider-default') warnings.push({ type: 'unsupported', feature: 'reasoning' });
    return warnings;
  }

  private async run(options: LanguageModelV4CallOptions, sink: StreamSink = {}): Promise<RunResult> {
    const warnings = this.warningsFor(options);
    const plan = answerPlan({ ...options, endsWithToolResult: endsWithToolResult(options.prompt) });
    const loaded = await this.load();
    options.abortSignal?.throwIfAborted();

    const contextSize = loaded.context.contextSize;
    const requested = options.maxOutputTokens ?? this.config.defaultMaxOutputTokens ?? 256;
    const maxTokens = Math.max(1, Math.min(requested, contextSize - MIN_PROMPT_TOKENS));
    if (maxTokens < requested) {
      warnings.push({ type: 'compatibility', feature: 'maxOutputTokens', details: `capped at ${maxTokens} by the context size` });
    }
    const tokensOf = (chatHistory: ChatHistoryItem[]) =>
      loaded.chatWrapper.generateContextState({ chatHistory }).contextText.tokenize(loaded.model.tokenizer).length;
    const window = fitChatHistoryWindow(convertToLlamaChatHistory(options.prompt), contextSize - maxTokens, tokensOf);
    const { history, tokens: inputTokens } = window;
    if (window.cut) warnings.push({ type: 'compatibility', feature: 'prompt', details: `only its last ${inputTokens} tokens fit the context of ${contextSize}` });

    const { LlamaChat } = await import('node-llama-cpp');
    const sequence = await acquireSequence(loaded, options.abortSignal);
    // tokens the model sampled for this call (the end-of-turn token included when it ends the
    // answer); node-llama-cpp's onToken reports re-tokenised text instead, which can differ
    const meterBefore = sequence.tokenMeter.getState();
    try {
      const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: loaded.chatWrapper, autoDisposeSequence: false });
      try {
        const generateOptions = {
          maxTokens,
          temperature: options.temperature ?? this.config.defaultTemperature ?? 0.7,
          ...(options.topP !== undefined ? { topP: options.topP } : {}),
          ...(options.topK !== undefined ? { topK: options.topK } : {}),
          // without a seed llama.cpp's sampler would repeat the same choices call after call
          seed: options.seed ?? engineOptions(LLAMA_CHAT_ENGINE.options, options.providerOptions, this.provider).seed ?? randomInt(0, 2 ** 31),
          ...(options.abortSignal ? { signal: options.abortSignal } : {}),
          ...(options.stopSequences?.length && plan.kind === 'text' ? { customStopTriggers: options.stopSequences } : {}),
          ...(options.presencePenalty || options.frequencyPenalty
            ? {
                repeatPenalty: {
                  ...(options.presencePenalty ? { presencePenalty: options.presencePenalty } : {}),
                  ...(options.frequencyPenalty ? { frequencyPenalty: options.frequencyPenalty } : {}),
                },
              }
            : {}),
        };
        const llama = plan.kind === 'text' ? undefined : await getSharedLlama(this.config.gpu ?? false);
        // a constrained answer's grammar allows at most `budget` bytes, so at most as many tokens, then the end
        // token: it is never cut (the schemas whose shortest answer does not fit were refused before the price)
        const constrained = async (gbnf: string, budget: number, onTextChunk?: (text: string) => void): Promise<string> => {
          const grammar = await this.grammar(llama!, gbnf);
          const response = await chat.generateResponse(history, { ...generateOptions, maxTokens: budget + 1, grammar, ...(onTextChunk ? { onTextChunk } : {}) });
          if (response.metadata.stopReason === 'maxTokens') throw new LocalModelLoadError(`model ${this.modelId}: the constrained answer did not end within its budget`);
          return response.response;
        };
        const grammarOf = (schema: ClientSchema, budget: number): string => {
          const grammar = schema.grammar(budget);
          if (!grammar) throw new LocalModelLoadError(`model ${this.modelId}: no answer fits max_tokens ${maxTokens}`);
          return grammar.gbnf;
        };
        const result = (text: string, toolCalls: RunToolCall[], finishReason: LanguageModelV4FinishReason, stopSequence?: string): RunResult => ({
          text,
          toolCalls,
          finishReason,
          usage: convertLlamaUsage(inputTokens, sequence.tokenMeter.diff(meterBefore).usedOutputTokens),
          warnings,
          ...(stopSequence === undefined ? {} : { stopSequence }),
        });
        if (plan.kind === 'tool') {
          const { candidates, budget } = toolCandidates(plan.tools, maxTokens);
          let chosen = candidates[0];
          if (!chosen) throw new LocalModelLoadError(`model ${this.modelId}: no tool's arguments fit max_tokens ${maxTokens}`);
          if (plan.tools.length > 1) {
            // the model picks the tool: a grammar of the names alone
            const names = clientSchema({ enum: candidates.map(({ tool }) => tool.name) });
            const picked = JSON.parse(await constrained(grammarOf(names, maxTokens - budget - 1), maxTokens - budget - 1)) as string;
            chosen = candidates.find(({ tool }) => tool.name === picked) ?? chosen;
          }
          const { tool, schema } = chosen;
          const toolCallId = `call_${randomBytes(12).toString('base64url')}`;
          sink.toolStart?.(toolCallId, tool.name);
          const input = await constrained(grammarOf(schema, budget), budget, sink.toolDelta && ((delta) => sink.toolDelta!(toolCallId, delta)));
          this.checkJson(input, schema, `the arguments of ${tool.name}`);
          return result('', [{ toolCallId, toolName: tool.name, input }], { unified: 'tool-calls', raw: 'tool-calls' });
        }
        if (plan.kind === 'json') {
          const schema = clientSchema(plan.schema);
          const text = await constrained(grammarOf(schema, jsonBudget(maxTokens)), jsonBudget(maxTokens), sink.text);
          this.checkJson(text, schema, 'the answer');
          return result(text, [], { unified: 'stop', raw: 'grammar' });
        }
        const response = await chat.generateResponse(history, { ...generateOptions, ...(sink.text ? { onTextChunk: sink.text } : {}) });
        const metadata = response.metadata;
        const stopSequence = metadata.stopReason === 'customStopTrigger' ? metadata.customStopTrigger.filter((part) => typeof part === 'string').join('') : undefined;
        return result(response.response, [], mapLlamaFinishReason(metadata.stopReason), stopSequence);
      } finally {
        chat.dispose({ disposeSequence: false });
      }
    } finally {
      await sequence.clearHistory().catch(() => undefined);
      releaseSequence(loaded, sequence);
    }
  }

  /** A parsed grammar, kept per text: an agent sends the same tools call after call. */
  private grammar(llama: Llama, gbnf: string): Promise<LlamaGrammar> {
    let grammar = this.grammars.get(gbnf);
    if (!grammar) {
      grammar = llama.createGrammar({ grammar: gbnf });
      grammar.catch(() => this.grammars.delete(gbnf));
      if (this.grammars.size >= KEPT_GRAMMARS) this.grammars.delete(this.grammars.keys().next().value!);
      this.grammars.set(gbnf, grammar);
    }
    return grammar;
  }

  /** A constrained answer that is not JSON fitting its schema is a bug here, never handed out. */
  private checkJson(text: string, schema: ClientSchema, what: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new LocalModelLoadError(`model ${this.modelId}: ${what} is not JSON`);
    }
    if (!schema.fits(value)) throw new LocalModelLoadError(`model ${this.modelId}: ${what} does not fit its schema`);
  }

  private metadataOf(result: RunResult): { providerMetadata?: { [provider: string]: { stopSequence: string } } } {
    return result.stopSequence === undefined ? {} : { providerMetadata: { [this.provider]: { stopSequence: result.stopSequence } } };
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const result = await this.run(options);
    return {
      content: [
        ...(result.text.length > 0 ? [{ type: 'text' as const, text: result.text }] : []),
        ...result.toolCalls.map((call) => ({ type: 'tool-call' as const, ...call })),
      ],
      finishReason: result.finishReason,
      usage: result.usage,
      warnings: result.warnings,
      response: { modelId: this.modelId, timestamp: new Date() },
      ...this.metadataOf(result),
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    // a reader that cancels (the client left, a caller that stopped reading) closes the stream while the engine
    // may still hand on a token before its abort signal stops it: nothing is enqueued after that
    let cancelled = false;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      cancel: () => {
        cancelled = true;
      },
      start: (controller) => {
        const id = 'text-0';
        let started = false;
        controller.enqueue({ type: 'stream-start', warnings: this.warningsFor(options) });
        controller.enqueue({ type: 'response-metadata', modelId: this.modelId, timestamp: new Date() });
        const run = this.run(options, {
          text: (delta) => {
            if (cancelled) return;
            if (!started) {
              controller.enqueue({ type: 'text-start', id });
              started = true;
            }
            if (delta.length > 0) controller.enqueue({ type: 'text-delta', id, delta });
          },
          toolStart: (toolCallId, toolName) => {
            if (!cancelled) controller.enqueue({ type: 'tool-input-start', id: toolCallId, toolName });
          },
          toolDelta: (toolCallId, delta) => {
            if (!cancelled && delta.length > 0) controller.enqueue({ type: 'tool-input-delta', id: toolCallId, delta });
          },
        });
        run.then(
          (result) => {
            if (cancelled) return;
            if (started) controller.enqueue({ type: 'text-end', id });
            for (const call of result.toolCalls) {
              controller.enqueue({ type: 'tool-input-end', id: call.toolCallId });
              controller.enqueue({ type: 'tool-call', ...call });
            }
            controller.enqueue({ type: 'finish', usage: result.usage, finishReason: result.finishReason, ...this.metadataOf(result) });
            controller.close();
          },
          (error: unknown) => {
            if (cancelled) return;
            controller.enqueue({ type: 'error', error });
            controller.close();
          },
        );
      },
    });
    return { stream };
  }
}
