// A model's stream parts, read without a web stream. LanguageModelV4's doStream hands back a ReadableStream; making
// one and reading it part by part took ~25 us of a streamed call's first token (bench/upstream-overhead.ts), more
// than the gateway's whole check of the request. A model of ours (openai-compatible/chat-model.ts) hands its parts
// back as a PartReader too, under PART_READER: streamChat (chat-completion.ts) reads that when it is there. Any
// other reader of the result still gets `stream`, a ReadableStream over the same parts, made when first asked for.
import type { LanguageModelV4StreamPart, LanguageModelV4StreamResult } from '@ai-sdk/provider';

export const PART_READER = Symbol('part reader');

/** One read: a part, or the end. */
export type PartRead = { done: false; value: LanguageModelV4StreamPart } | { done: true; value?: LanguageModelV4StreamPart | undefined };

/** What streamChat asks of a model's stream: a ReadableStreamDefaultReader's read and cancel. */
export interface PartReader {
  read(): Promise<PartRead>;
  cancel(): Promise<void>;
}

/** The result's own PartReader, or a reader of its ReadableStream. */
export function partReaderOf(result: LanguageModelV4StreamResult): PartReader {
  return (result as { [PART_READER]?: PartReader })[PART_READER] ?? result.stream.getReader();
}

/**
 * A doStream result over `reader`: its `stream` is made on first use and pulls a part only when one is read. A class,
 * not an object literal: a literal with a getter and a symbol key is built the slow way (~2 us a call, where this is
 * ~0.1).
 */
class PartStreamResult implements LanguageModelV4StreamResult {
  readonly [PART_READER]: PartReader;
  readonly request: LanguageModelV4StreamResult['request'];
  readonly response: LanguageModelV4StreamResult['response'];
  #stream: ReadableStream<LanguageModelV4StreamPart> | undefined;

  constructor(reader: PartReader, { request, response }: Omit<LanguageModelV4StreamResult, 'stream'>) {
    this[PART_READER] = reader;
    this.request = request;
    this.response = response;
  }

  get stream(): ReadableStream<LanguageModelV4StreamPart> {
    const reader = this[PART_READER];
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
