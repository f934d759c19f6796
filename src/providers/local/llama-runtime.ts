// The llama.cpp runtime the embedded chat model runs on: one native binding per process, the threads an
// evaluation takes, and the context's sequences lent to calls one at a time.
import { availableParallelism } from 'node:os';
import type { ChatWrapper, Llama, LlamaContext, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';

/** A loaded model: its context, chat template, and the sequences free for calls (and the calls waiting for one). */
export interface Loaded {
  model: LlamaModel;
  context: LlamaContext;
  chatWrapper: ChatWrapper;
  free: LlamaContextSequence[];
  waiters: Array<(sequence: LlamaContextSequence) => void>;
  loadMs: number;
}

/** below this file size a single evaluation thread is faster than several */
const TINY_MODEL_BYTES = 64 * 1024 * 1024;

let sharedLlama: Promise<Llama> | undefined;
const sharedLlamaGpu = new Map<string, Promise<Llama>>();

/** One llama.cpp binding per process (per GPU setting): loading the native addon is not free. */
export async function getSharedLlama(gpu: false | 'auto'): Promise<Llama> {
  const key = String(gpu);
  let llama = key === 'false' ? sharedLlama : sharedLlamaGpu.get(key);
  if (!llama) {
    const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
    llama = getLlama({ gpu, build: 'never', skipDownload: true, progressLogs: false, logLevel: LlamaLogLevel.error });
    if (key === 'false') sharedLlama = llama;
    else sharedLlamaGpu.set(key, llama);
    llama.catch(() => {
      if (key === 'false') sharedLlama = undefined;
      else sharedLlamaGpu.delete(key);
    });
  }
  return llama;
}

/**
 * Threads per evaluation. node-llama-cpp's default can exceed the cores this process really has,
 * and oversubscribed llama.cpp threads spin against each other (measured here on 2 cores: 8
 * tokens/s with 4 threads vs ~1,000 with 1 on the demo model). Models this small are fastest on
 * one thread; larger ones use every available core.
 */
export function evaluationThreads(configured: number | undefined, llama: Llama, model: LlamaModel): number {
  if (configured !== undefined) return Math.max(1, configured);
  if (model.size < TINY_MODEL_BYTES) return 1;
  return Math.max(1, Math.min(availableParallelism(), llama.cpuMathCores));
}

/** A free sequence of the context, or the next one given back (a call aborted while waiting leaves the queue). */
export function acquireSequence(loaded: Loaded, signal: AbortSignal | undefined): Promise<LlamaContextSequence> {
  const sequence = loaded.free.pop();
  if (sequence) return Promise.resolve(sequence);
  return new Promise((resolve, reject) => {
    const waiter = (s: LlamaContextSequence) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(s);
    };
    const onAbort = () => {
      const index = loaded.waiters.indexOf(waiter);
      if (index >= 0) loaded.waiters.splice(index, 1);
      reject(signal?.reason ?? new Error('aborted'));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    loaded.waiters.push(waiter);
  });
}

export function releaseSequence(loaded: Loaded, sequence: LlamaContextSequence): void {
  const next = loaded.waiters.shift();
  if (next) next(sequence);
  else loaded.free.push(sequence);
}
