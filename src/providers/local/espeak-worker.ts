// Worker thread entry: runs eSpeak NG and the audio encoders here so that instantiating the ~18 MB
// WebAssembly module, synthesizing (together ~60-100 ms of blocking work per call) and encoding MP3 or
// Ogg (~5 ms per second of speech) never stall the gateway's event loop.
import { parentPort } from 'node:worker_threads';
import { EspeakError, synthesizeWav, type EspeakSynthesisOptions } from './espeak-wasm.ts';
import { encodeWav, type EncodedFormat } from './audio-encoder.ts';
import { fixWavSizes, parseWav } from '../../media/wav.ts';

export type EspeakFileFormat = 'wav' | EncodedFormat;

export interface EspeakJob {
  id: number;
  options: EspeakSynthesisOptions;
  format: EspeakFileFormat;
}

export interface SpokenAudio {
  /** the audio file, in the job's format */
  bytes: Uint8Array;
  sampleRate: number;
  /** length of the speech (the encoded file may add a few milliseconds of encoder padding) */
  durationSeconds: number;
}

export type EspeakReply = { id: number; audio: SpokenAudio } | { id: number; error: string; espeak: boolean };

const port = parentPort;
if (!port) throw new Error('espeak-worker.ts runs as a worker thread');

async function speak({ options, format }: EspeakJob): Promise<SpokenAudio> {
  const wav = fixWavSizes(await synthesizeWav(options));
  const { sampleRate, durationSeconds } = parseWav(wav);
  return { bytes: format === 'wav' ? wav : await encodeWav(wav, format), sampleRate, durationSeconds };
}

port.on('message', async (job: EspeakJob) => {
  let reply: EspeakReply;
  try {
    reply = { id: job.id, audio: await speak(job) };
  } catch (error) {
    reply = { id: job.id, error: error instanceof Error ? error.message : String(error), espeak: error instanceof EspeakError };
  }
  port.postMessage(reply, 'audio' in reply ? [reply.audio.bytes.buffer as ArrayBuffer] : []);
});
