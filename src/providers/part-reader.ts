// A model's stream parts, read without a web stream. LanguageModelV4's doStream hands back a ReadableStream; making
// one and reading it part by part took ~25 us of a streamed call's first token (bench/upstream-overhead.ts), more
// than the gateway's whole check of the request. A model of ours (openai-compatible/chat-model.ts) hands back a
// result that holds its parts as a PartReader: streamChat (chat-completion.ts) reads that when it is there. Any other
// reader of the result still gets `stream`, a ReadableStream over the same parts, made when first asked for. A copy of
// the result (`{ ...result, stream: transformed }`, as a middleware makes) is not one: its own `stream` is read.
import type { LanguageModelV4StreamPart, LanguageModelV4StreamResult } from '@ai-sdk/provider';

/** One read: a part, or the end. */
export type PartRead = { done: false; value: LanguageModelV4StreamPart } | { done: true; value?: LanguageModelV4StreamPart | undefined };

/** What streamChat asks of a model's stream: a ReadableStreamDefaultReader's read and cancel. */
export interface PartReader {
  read(): Promise<PartRead>;
  cancel(): Promise<void>;
}

/**
 * A doStream result over `reader`: its `stream` is made on first use and pulls a part only when one is read. A class,
 * not an object literal: a literal with a getter is built the slow way (~2 us a call, where this is ~0.03).
 */
class PartStreamResult implements LanguageModelV4StreamResult {
  readonly #reader: PartReader;
  readonly request: LanguageModelV4StreamResult['request'];
  readonly response: LanguageModelV4StreamResult['response'];
  #stream: ReadableStream<LanguageModelV4StreamPart> | undefined;

  constructor(reader: PartReader, { request, response }: Omit<LanguageModelV4StreamResult, 'stream'>) {
    this.#reader = reader;
    this.request = request;
    this.response = response;
  }

  static readerOf(result: LanguageModelV4StreamResult): PartReader | undefined {
    return #reader in result ? result.#reader : undefined;
  }

  get stream(): ReadableStream<LanguageModelV4StreamPart> {
    const reader = this.#reader;
    this.#stream ??= new ReadableStream<LanguageModelV4StreamPart>(
      {
        async pull(controller) {
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        cancel: () => reader.cancel(),
      },
      // a part is taken from the reader only for a read of the stream: made and not read, it takes nothing
      { highWaterMark: 0 },
    );
    return this.#stream;
  }
}

export function withPartReader(reader: PartReader, rest: Omit<LanguageModelV4StreamResult, 'stream'>): LanguageModelV4StreamResult {
  return new PartStreamResult(reader, rest);
}

/** The result's own PartReader, or a reader of its ReadableStream. */
export function partReaderOf(result: LanguageModelV4StreamResult): PartReader {
  return PartStreamResult.readerOf(result) ?? result.stream.getReader();
}
