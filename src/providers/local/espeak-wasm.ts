// Runs the eSpeak NG command line, compiled to WebAssembly by the espeak-ng package, to turn text
// into a WAV file.
//
// The package exports only main(), which runs once while a module instance starts, and keeps its
// files (voices, input, output) in the instance's own in-memory file system. So every call gets a
// fresh instance of a WebAssembly module compiled once per process: calls share nothing (measured
// ~50 ms of start-up per call, against ~10-50 ms of synthesis). Calls are still run one at a time,
// because each instance holds ~32 MB of linear memory and all of it is blocking work anyway: the
// speech model runs this module on a worker thread (espeak-worker.ts).

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export class EspeakError extends Error {
  override name = 'EspeakError';
}

export interface EspeakSynthesisOptions {
  text: string;
  /** eSpeak voice: a language (`en-us`) optionally with a variant (`en-us+f3`) */
  voice: string;
  /** speaking rate in words per minute (eSpeak's default is 175) */
  wordsPerMinute?: number;
  /** 0-99, eSpeak's default is 50 */
  pitch?: number;
}

type Factory = (typeof import('espeak-ng'))['default'];

// The WebAssembly calls used here; TypeScript declares WebAssembly only in its DOM libs.
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: object): Promise<object>;
}
const { WebAssembly } = globalThis as unknown as { WebAssembly: WasmApi };

interface Engine {
  factory: Factory;
  /** the compiled WebAssembly.Module */
  wasm: object;
}

let engine: Promise<Engine> | undefined;

/** Compiles the ~18 MB module once; later calls only instantiate it. */
function loadEngine(): Promise<Engine> {
  engine ??= (async () => {
    const { default: factory } = await import('espeak-ng');
    const wasmPath = fileURLToPath(new URL('espeak-ng.wasm', import.meta.resolve('espeak-ng')));
    const wasm = await WebAssembly.compile(await readFile(wasmPath));
    return { factory, wasm };
  })();
  engine.catch(() => {
    engine = undefined; // let a later call try again
  });
  return engine;
}

let queue: Promise<unknown> = Promise.resolve();

function oneAtATime<T>(job: () => Promise<T>): Promise<T> {
  const run = queue.then(job, job);
  queue = run.catch(() => undefined);
  return run;
}

// Emscripten's note when main() returns: noise, not an error.
const RUNTIME_NOTE = /^program exited \(with status: \d+\), but keepRuntimeAlive/;

/** WAV bytes (16-bit mono PCM, 22,050 Hz) as eSpeak wrote them. */
export function synthesizeWav(options: EspeakSynthesisOptions, signal?: AbortSignal): Promise<Uint8Array> {
  return oneAtATime(async () => {
    signal?.throwIfAborted();
    const { factory, wasm } = await loadEngine();
    signal?.throwIfAborted();
    const args = ['-v', options.voice, '-w', '/out.wav', '-f', '/in.txt'];
    if (options.wordsPerMinute !== undefined) args.push('-s', String(Math.round(options.wordsPerMinute)));
    if (options.pitch !== undefined) args.push('-p', String(Math.round(options.pitch)));
    const messages: string[] = [];
    let status = 0;
    // main() runs inside the instantiation callback: a crash there must fail this call, not the process.
    let crash: unknown;
    let fail!: (error: unknown) => void;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    const started = factory({
      arguments: args,
      // The text goes through a file, so text starting with "-" is never read as an option.
      preRun: [(module) => module.FS.writeFile('/in.txt', options.text)],
      print: () => {}, // eSpeak prints nothing useful on stdout when writing a file
      printErr: (line) => {
        if (!RUNTIME_NOTE.test(line)) messages.push(line);
      },
      quit: (code, toThrow) => {
        status = code; // instead of the default, which sets the gateway's process.exitCode
        throw toThrow;
      },
      instantiateWasm(imports, receive) {
        WebAssembly.instantiate(wasm, imports).then((instance) => {
          try {
            receive(instance);
          } catch (error) {
            crash = error;
            fail(error);
          }
        }, fail);
        return {};
      },
    });
    const instance = await Promise.race([started, failed]).catch((error: unknown) => {
      crash = error;
      return undefined;
    });
    if (crash !== undefined || !instance) throw new EspeakError(`espeak-ng failed to run: ${String(crash)}`, { cause: crash });
    if (status !== 0) throw new EspeakError(messages.join(' ').replace(/^Error:\s*/, '') || `espeak-ng exited with status ${status}`);
    try {
      return instance.FS.readFile('/out.wav');
    } catch {
      throw new EspeakError(`espeak-ng wrote no audio${messages.length ? `: ${messages.join(' ')}` : ''}`);
    }
  });
}
