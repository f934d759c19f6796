// Where a paid stream's events go (paid-route.ts openStream writes them): a web ReadableStream in the app's Response,
// or the socket itself on the paid lane (paid-lane.ts). Both hold the same bound of unread bytes before the model
// is paused, and both tell the stream when its client leaves.
import type { ServerResponse } from 'node:http';
import { writeTrustedHead } from '../trusted-head.ts';

/** What a stream's body holds that its client has not read yet, before the model is paused. */
export const STREAM_BUFFER_BYTES = 64 * 1024;

/** Where a stream's events go. */
export interface EventSink {
  /**
   * A piece of the stream. Backpressure: the sink holds at most STREAM_BUFFER_BYTES the client has not read; past
   * that, a promise that resolves once the client reads again or leaves, which the events' run loop awaits before it
   * reads the next piece from the model.
   */
  write(text: string): Promise<void> | undefined;
  /** the stream's end */
  close(): void;
  /** aborted when the client leaves before the stream's end */
  readonly signal: AbortSignal;
}

/** An EventSink that is a web ReadableStream, for the app's Response. */
export function webEventSink(): EventSink & { body: ReadableStream<Uint8Array> } {
  const encoder = new TextEncoder();
  const client = new AbortController();
  let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
  let open = true;
  let room: (() => void) | undefined;
  const wake = () => {
    room?.();
    room = undefined;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        sink = controller;
      },
      pull: wake,
      cancel() {
        open = false;
        wake();
        client.abort(new Error('the client closed the stream before the answer was complete'));
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
  );
  return {
    body,
    signal: client.signal,
    write(text) {
      if (!open || !text) return undefined;
      sink!.enqueue(encoder.encode(text));
      if ((sink!.desiredSize ?? 0) > 0) return undefined;
      return new Promise<void>((resolve) => {
        const previous = room;
        room = () => (previous?.(), resolve());
      });
    },
    close() {
      if (open) sink!.close();
      open = false;
      wake();
    },
  };
}

/**
 * An EventSink that is the socket: its pieces are written once the head is (`open`), then as they come; past
 * STREAM_BUFFER_BYTES the client has not read, the next waits for the socket to drain.
 */
export function socketEventSink(response: ServerResponse): EventSink & { open(headers: readonly (readonly [string, string])[]): void } {
  const client = new AbortController();
  const pending: string[] = [];
  let opened = false;
  let closed = false;
  // a write racing the client's leaving fails on the socket; the leaving itself is told by 'close'
  response.on('error', () => {});
  response.once('close', () => {
    if (!response.writableFinished) client.abort(new Error('the client closed the stream before the answer was complete'));
  });
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        response.off('drain', done);
        response.off('close', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
  return {
    signal: client.signal,
    open(headers) {
      writeTrustedHead(response, 200, headers);
      opened = true;
      for (const text of pending.splice(0)) response.write(text);
      if (closed) response.end();
    },
    write(text) {
      if (closed || !text || client.signal.aborted) return undefined;
      if (!opened) {
        pending.push(text);
        return undefined;
      }
      // a write over the bound is over the socket's high-water mark too: it returned false, and 'drain' will come
      const below = response.write(text) || response.writableLength <= STREAM_BUFFER_BYTES;
      return below ? undefined : drained();
    },
    close() {
      if (closed) return;
      closed = true;
      if (opened) response.end();
    },
  };
}
