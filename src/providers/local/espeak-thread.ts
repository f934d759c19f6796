// Hands synthesis and encoding to one worker thread running eSpeak NG (espeak-worker.ts), started on first use.
// The worker takes jobs one at a time, in order; it holds the process open only while jobs are
// pending, and is started again if it dies.
import { Worker } from 'node:worker_threads';
import { EspeakError, type EspeakSynthesisOptions } from './espeak-wasm.ts';
import type { EspeakFileFormat, EspeakJob, EspeakReply, SpokenAudio } from './espeak-worker.ts';

interface Pending {
  resolve: (audio: SpokenAudio) => void;
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
    if ('audio' in reply) job.resolve(reply.audio);
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

/** The text spoken as an audio file in the format asked for, synthesized and encoded off the main thread. */
export function speakInWorker(options: EspeakSynthesisOptions, format: EspeakFileFormat, signal?: AbortSignal): Promise<SpokenAudio> {
  return new Promise<SpokenAudio>((resolve, reject) => {
    signal?.throwIfAborted();
    worker ??= startWorker();
    const id = nextId++;
    const onAbort = () => {
      settle(id); // the worker still finishes the job; its result is dropped
      reject(signal?.reason);
    };
    pending.set(id, {
      resolve: (audio) => (signal?.removeEventListener('abort', onAbort), resolve(audio)),
      reject: (error) => (signal?.removeEventListener('abort', onAbort), reject(error)),
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.ref(); // keep the process alive until the answer comes
    worker.postMessage({ id, options, format } satisfies EspeakJob);
  });
}
