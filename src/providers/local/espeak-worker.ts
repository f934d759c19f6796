// Worker thread entry: runs eSpeak NG here so that instantiating the ~18 MB WebAssembly module and
// synthesizing (together ~60-100 ms of blocking work per call) never stall the gateway's event loop.
import { parentPort } from 'node:worker_threads';
import { EspeakError, synthesizeWav, type EspeakSynthesisOptions } from './espeak-wasm.ts';

export interface EspeakJob {
  id: number;
  options: EspeakSynthesisOptions;
}

export type EspeakReply = { id: number; wav: Uint8Array } | { id: number; error: string; espeak: boolean };

const port = parentPort;
if (!port) throw new Error('espeak-worker.ts runs as a worker thread');

port.on('message', async ({ id, options }: EspeakJob) => {
  let reply: EspeakReply;
  try {
    reply = { id, wav: await synthesizeWav(options) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error), espeak: error instanceof EspeakError };
  }
  port.postMessage(reply, 'wav' in reply ? [reply.wav.buffer as ArrayBuffer] : []);
});
