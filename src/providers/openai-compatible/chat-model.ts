// An OpenAI-compatible chat model (LanguageModelV4) that sends the AI SDK's request and reads the answer itself.
//
// @ai-sdk/openai-compatible builds the request body (prepareRequest: the messages, tools, response format and
// provider options, exactly as its doGenerate would; a plain text call's body is built directly, the same bytes,
// plain-request.ts). What it does after that, on every call, costs more than the whole gateway should add to one
// (bench/upstream-overhead.ts): a fetch Response with web streams around the body, header objects, a zod parse of
// the answer, and for a stream a TextDecoderStream, an EventSourceParserStream and a zod parse per event. Here the
// body goes out over undici's request API (lib/node-http-fetch.ts `send`) and the answer is read from its body
// stream: JSON.parse for a whole answer, eventsource-parser on the bytes for a stream, the fields checked by hand
// (chat-answer.ts).
// Failures are the SDK's: an APICallError with the status, the upstream's message and whether a retry may help.
import { APICallError, type LanguageModelV4, type LanguageModelV4CallOptions, type LanguageModelV4StreamPart, type SharedV4Warning } from '@ai-sdk/provider';
import type { OpenAICompatibleChatLanguageModel } from '@ai-sdk/openai-compatible';
import { isAbortError } from '@ai-sdk/provider-utils';
import { createParser } from 'eventsource-parser';
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpAnswer, HttpSend } from '../../lib/node-http-fetch.ts';
import { UpstreamResponseTooLargeError } from './limited-fetch.ts';
import { ChatStreamReader, UnreadableAnswer, generatedAnswer } from './chat-answer.ts';
import { plainRequestBody } from './plain-request.ts';
import { withPartReader, type PartRead, type PartReader } from '../part-reader.ts';

export interface ChatEndpoint {
  /** the provider's base URL (…/v1) */
  baseURL: string;
  /** sent with every call: the API key, when there is one */
  apiKey?: string | undefined;
  send: HttpSend;
  /** the largest answer read, whole or streamed */
  maxResponseBytes: number;
}

/** The key the SDK reports metadata under: the provider's name, camelCased when the call's options use that form. */
function metadataKeyOf(name: string, providerOptions: LanguageModelV4CallOptions['providerOptions']): string {
  const camel = name.replace(/[_-]([a-z])/g, (match) => match[1]!.toUpperCase());
  return camel !== name && providerOptions?.[camel] != null ? camel : name;
}

export function openAICompatibleChat(sdkModel: LanguageModelV4, endpoint: ChatEndpoint): LanguageModelV4 {
  const builder = sdkModel as OpenAICompatibleChatLanguageModel;
  const url = new URL(`${endpoint.baseURL.replace(/\/+$/, '')}/chat/completions`);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    // some API fronts refuse a request without one
    'user-agent': 'x402-ai-gateway',
    ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
  };
  const name = builder.provider.split('.')[0]!.trim();

  /** Posts the body; an answer that is not a 2xx is read (bounded) and thrown as the SDK's APICallError. */
  const post = async (body: Record<string, unknown>, sent: string, signal: AbortSignal | undefined): Promise<HttpAnswer> => {
    let answer: HttpAnswer;
    try {
      answer = await endpoint.send(url, { method: 'POST', headers, body: sent, signal });
    } catch (error) {
      throw failure(error, body);
    }
    if (answer.status >= 200 && answer.status < 300) return answer;
    const text = await readText(answer, endpoint.maxResponseBytes).catch(() => '');
    throw new APICallError({
      message: upstreamMessage(text) ?? `upstream answered ${answer.status}`,
      url: url.href,
      requestBodyValues: body,
      statusCode: answer.status,
      responseHeaders: flatHeaders(answer.headers),
      responseBody: text,
    });
  };

  /**
   * What a failed call throws, as the SDK's postToApi would: an abort as it is; a connection that failed or was
   * cut (a network error code in the causes) as a retryable APICallError; anything else on a 2xx (a body past the
   * cap, not JSON, not a chat completion) as a non-retryable one with that status.
   */
  const failure = (error: unknown, body: Record<string, unknown>, answer?: HttpAnswer, text?: string): unknown => {
    if (isAbortError(error) || APICallError.isInstance(error)) return error;
    const network = networkCause(error);
    const retryable = network !== undefined || answer === undefined;
    const cause = network ?? (error as { cause?: Error }).cause ?? (error as Error);
    return new APICallError({
      message: retryable
        ? `Cannot connect to API: ${cause.message}`
        : error instanceof UnreadableAnswer || error instanceof SyntaxError
          ? 'Invalid JSON response'
          : 'Failed to process successful response',
      cause: error,
      url: url.href,
      requestBodyValues: body,
      isRetryable: retryable,
      // an answer cut mid-body keeps its status and headers: its retry-after is honoured
      ...(answer ? { statusCode: answer.status, responseHeaders: flatHeaders(answer.headers) } : {}),
      ...(text === undefined ? {} : { responseBody: text }),
    });
  };

  /** The request body: built directly for a plain call (plain-request.ts), else by the SDK. */
  const requestOf = async (options: LanguageModelV4CallOptions): Promise<{ body: Record<string, unknown>; warnings: SharedV4Warning[] }> => {
    const plain = plainRequestBody(builder.modelId, name, options);
    return plain ? { body: plain, warnings: [] } : builder.prepareRequest(options);
  };

  return {
    specificationVersion: 'v4',
    provider: builder.provider,
    modelId: builder.modelId,
    supportedUrls: {},

    async doGenerate(options) {
      const { body, warnings } = await requestOf(options);
      const sent = JSON.stringify(body);
      const answer = await post(body, sent, options.abortSignal);
      let text: string | undefined;
      try {
        text = await readText(answer, endpoint.maxResponseBytes);
        const parsed: unknown = JSON.parse(text);
        const result = generatedAnswer(parsed, metadataKeyOf(name, options.providerOptions));
        return { ...result, request: { body: sent }, response: { ...result.response, headers: flatHeaders(answer.headers), body: parsed }, warnings };
      } catch (error) {
        throw failure(error, body, answer, text);
      }
    },

    async doStream(options) {
      const prepared = await requestOf(options);
      const body = { ...prepared.body, stream: true, stream_options: { include_usage: true } };
      const sent = JSON.stringify(body);
      const answer = await post(body, sent, options.abortSignal);
      const metadataKey = metadataKeyOf(name, options.providerOptions);
      const parts = new EventParts(answer, endpoint.maxResponseBytes, (emit) => {
        emit({ type: 'stream-start', warnings: prepared.warnings });
        return new ChatStreamReader(emit, metadataKey);
      });
      return withPartReader(parts, { request: { body: sent }, response: { headers: flatHeaders(answer.headers) } });
    },
  };
}

/**
 * The stream parts of an event-stream answer, read as the reader asks for them: the socket is paused while a part
 * waits to be read, and destroyed when the reader cancels. Past `maxBytes` the read fails. Read as a web stream
 * would be (a failure drops the parts not read yet), one read at a time (as streamChat and a stream's pull make
 * them), without making one (part-reader.ts).
 */
class EventParts implements PartReader {
  readonly #parts: LanguageModelV4StreamPart[] = [];
  readonly #source: HttpAnswer['body'];
  #state: 'open' | 'closed' | 'failed' = 'open';
  #failure: unknown;
  #waiting: { resolve: (next: PartRead) => void; reject: (error: unknown) => void } | undefined;

  constructor(answer: HttpAnswer, maxBytes: number, open: (emit: (part: LanguageModelV4StreamPart) => void) => ChatStreamReader) {
    const source = (this.#source = answer.body);
    const reader = open((part) => this.#emit(part));
    const parser = createParser({ onEvent: (event) => event.data !== '[DONE]' && reader.event(event.data) });
    const decoder = new TextDecoder();
    let seen = 0;
    source.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) return this.#fail(tooLarge(maxBytes));
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (this.#parts.length > 0) source.pause();
    });
    source.once('end', () => {
      if (this.#state !== 'open') return;
      parser.feed(decoder.decode());
      reader.end();
      this.#end();
    });
    source.on('error', (error) => this.#fail(error));
  }

  read(): Promise<PartRead> {
    if (this.#state === 'failed') return Promise.reject(this.#failure);
    const part = this.#parts.shift();
    if (this.#parts.length === 0 && this.#state === 'open') this.#source.resume();
    if (part) return Promise.resolve({ done: false, value: part });
    if (this.#state === 'closed') return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  cancel(): Promise<void> {
    this.#parts.length = 0;
    this.#end();
    this.#source.destroy();
    return Promise.resolve();
  }

  #emit(part: LanguageModelV4StreamPart): void {
    if (this.#state !== 'open') return;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting.resolve({ done: false, value: part });
    else this.#parts.push(part);
  }

  #fail(error: unknown): void {
    if (this.#state === 'open') {
      this.#state = 'failed';
      this.#failure = error;
      this.#parts.length = 0;
      this.#waiting?.reject(error);
      this.#waiting = undefined;
    }
    this.#source.destroy();
  }

  /** no part comes after those held: a read waiting gets the end */
  #end(): void {
    if (this.#state !== 'open') return;
    this.#state = 'closed';
    this.#waiting?.resolve({ done: true, value: undefined });
    this.#waiting = undefined;
  }
}

const tooLarge = (maxBytes: number) => new UpstreamResponseTooLargeError(`upstream response exceeds the ${maxBytes}-byte limit`);

/** A whole answer's text, refused past `maxBytes` (declared or read). Stream events, not `for await`: a promise per chunk is not free. */
function readText(answer: HttpAnswer, maxBytes: number): Promise<string> {
  const source = answer.body;
  const refuse = () => {
    source.destroy();
    return tooLarge(maxBytes);
  };
  if (Number(answer.headers['content-length'] ?? NaN) > maxBytes) return Promise.reject(refuse());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    source.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) reject(refuse());
      else chunks.push(chunk);
    });
    source.once('end', () => resolve((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8')));
    source.once('error', reject);
    // a body cut before its end (the connection closed, the call aborted) never ends: it errors or closes
    source.once('close', () => {
      if (!source.readableEnded) reject(Object.assign(new Error('the upstream closed the connection before its answer was whole'), { code: 'ECONNRESET' }));
    });
  });
}

/** the network error codes the SDK retries on (provider-utils handle-fetch-error.ts, which does not export them) */
const RETRYABLE_NETWORK_CODES = new Set(['ConnectionRefused', 'ConnectionClosed', 'FailedToOpenSocket', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** The first error in the chain of causes that carries a network error code the SDK retries on. */
function networkCause(error: unknown): Error | undefined {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_NETWORK_CODES.has(code)) return current;
  }
  return undefined;
}

/** The upstream's own error message ({ error: { message } }, as OpenAI and compatible servers answer). */
function upstreamMessage(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown } }).error;
    return typeof error?.message === 'string' ? error.message : undefined;
  } catch {
    return undefined;
  }
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) if (value !== undefined) flat[key] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}
