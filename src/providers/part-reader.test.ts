// A doStream result over a PartReader: streamChat reads the reader; any other reader gets `stream`, which takes a part
// only when read; a copy of the result with a stream of its own is read through that stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { partReaderOf, withPartReader, type PartReader } from './part-reader.ts';

const text = (delta: string): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta });

function readerOf(parts: LanguageModelV4StreamPart[]): PartReader & { taken: number } {
  const reader = {
    taken: 0,
    read: async () => {
      const part = parts[reader.taken];
      if (!part) return { done: true as const };
      reader.taken += 1;
      return { done: false as const, value: part };
    },
    cancel: async () => undefined,
  };
  return reader;
}

async function all(reader: PartReader): Promise<LanguageModelV4StreamPart[]> {
  const seen: LanguageModelV4StreamPart[] = [];
  for (let next = await reader.read(); !next.done; next = await reader.read()) seen.push(next.value);
  return seen;
}

test('streamChat reads the reader itself; the stream, made and not read, takes nothing from it', async () => {
  const parts = readerOf([text('a'), text('b')]);
  const result = withPartReader(parts, { request: { body: '{}' } });
  void result.stream;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(parts.taken, 0);
  assert.equal(partReaderOf(result), parts);
  assert.deepEqual(await all(partReaderOf(result)), [text('a'), text('b')]);
});

test('another reader gets the same parts from the stream', async () => {
  const result = withPartReader(readerOf([text('a'), text('b')]), {});
  const seen: LanguageModelV4StreamPart[] = [];
  for await (const part of result.stream as unknown as AsyncIterable<LanguageModelV4StreamPart>) seen.push(part);
  assert.deepEqual(seen, [text('a'), text('b')]);
});

test('a copy of the result with a stream of its own (a middleware’s) is read through that stream', async () => {
  const result = withPartReader(readerOf([text('raw')]), {});
  const transformed = new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      controller.enqueue(text('transformed'));
      controller.close();
    },
  });
  assert.deepEqual(await all(partReaderOf({ ...result, stream: transformed })), [text('transformed')]);
});
