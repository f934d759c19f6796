// Hands synthesis to one worker thread running eSpeak NG (espeak-worker.ts), started on first use.
// The worker takes jobs one at a time, in order; it holds the process open only while jobs are
// pending, and is started again if it dies.
import { Worker } from 'node:worker_threads';
import { EspeakError, type EspeakSynthesisOptions } from './espeak-wasm.ts';
import type { EspeakJob, EspeakReply } from './espeak-worker.ts';

interface Pending {
  resolve: (wav: Uint8Array) => void;
  reject: (error: Error) => void;
}

let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;

function startWorker(): Worker {
  const started = new Worker(new URL('./espeak-worker.ts', import.meta.url));
  started.on('message', (reply: EspeakReply) => {
    const job = pending.get(reply.id);
    if (!job) return; // its caller gave up (aborted)
    settle(reply.id);
    if ('wav' in reply) job.resolve(reply.wav);
    else job.reject(reply.espeak ? new EspeakError(reply.error) : new Error(reply.error));
  });
  const fail = (error: Error) => {
    if (worker === started) worker = undefined;
    for (const [id, job] of pending) {
      settle(id);
      job.reject(new EspeakError(`espeak-ng worker stopped: ${error.message}`, { cause: error }));
    }
  };
  started.on('error', fail);
  started.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  started.unref();
  return started;
}

function settle(id: number): void {
  pending.delete(id);
  if (pending.size === 0) worker?.unref();
}

/** WAV bytes for the text, synthesized off the main thread. */
export function synthesizeWavInWorker(options: EspeakSynthesisOptions, signal?: AbortSignal): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    signal?.throwIfAborted();
    worker ??= startWorker();
    const id = nextId++;
    const onAbort = () => {
      settle(id); // the worker still finishes the job; its result is dropped
      reject(signal?.reason);
    };
    pending.set(id, {
      resolve: (wav) => (signal?.removeEventListener('abort', onAbort), resolve(wav)),
      reject: (error) => (signal?.removeEventListener('abort', onAbort), reject(error)),
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.ref(); // keep the process alive until the answer comes
    worker.postMessage({ id, options } satisfies EspeakJob);
  });
}
