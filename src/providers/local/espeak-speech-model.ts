// An AI SDK speech model (SpeechModelV4, what `generateSpeech` of ai@7 calls natively) over the
// eSpeak NG formant synthesizer compiled to WebAssembly: offline, no model weights; WAV, MP3 or Ogg Vorbis
// output. Synthesis and encoding run on a worker thread (espeak-thread.ts), so calls never block the event loop.

import {
  InvalidArgumentError,
  type SharedV4Warning,
  type SpeechModelV4,
  type SpeechModelV4CallOptions,
  type SpeechModelV4Result,
} from '@ai-sdk/provider';
import { speakInWorker } from './espeak-thread.ts';
import { ESPEAK_VOICES, isEspeakVoice } from '../../config/espeak-voices.ts';
import { ESPEAK_SPEECH_ENGINE } from '../../config/engines.ts';

/** what the engine gives: WAV, or WAV encoded by audio-encoder.ts; the catalog offers exactly these */
const OUTPUT_FORMATS: readonly EspeakFileFormat[] = ESPEAK_SPEECH_ENGINE.outputFormats;
import type { EspeakFileFormat } from './espeak-worker.ts';
import { engineOptions } from './engine-options.ts';

/** eSpeak's rate for speed 1, and the range its synthesizer accepts (words per minute). */
const BASE_WPM = 175;
const MIN_WPM = 80;
const MAX_WPM = 450;

export interface EspeakSpeechModelSettings {
  /** model id reported to the AI SDK; default `espeak-ng` */
  modelId?: string;
  /** voice when the call names none; default ESPEAK_DEFAULT_VOICE */
  defaultVoice?: string;
  maxTextLength?: number;
}

export class EspeakSpeechModel implements SpeechModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = ESPEAK_SPEECH_ENGINE.provider;
  readonly modelId: string;
  private readonly defaultVoice: string;
  private readonly maxTextLength: number;

  constructor(settings: EspeakSpeechModelSettings = {}) {
    this.modelId = settings.modelId ?? ESPEAK_SPEECH_ENGINE.id;
    this.defaultVoice = settings.defaultVoice ?? ESPEAK_SPEECH_ENGINE.defaultVoice;
    this.maxTextLength = settings.maxTextLength ?? ESPEAK_SPEECH_ENGINE.maxTextLength;
    if (!isEspeakVoice(this.defaultVoice)) throw unknownVoice(this.defaultVoice, 'defaultVoice');
  }

  async doGenerate(options: SpeechModelV4CallOptions): Promise<SpeechModelV4Result> {
    const warnings: SharedV4Warning[] = [];
    const text = options.text;
    if (text.trim() === '') throw new InvalidArgumentError({ argument: 'text', message: 'text is empty' });
    if (text.length > this.maxTextLength) {
      throw new InvalidArgumentError({
        argument: 'text',
        message: `text is ${text.length} characters; ${this.modelId} takes at most ${this.maxTextLength}`,
      });
    }
    const voice = this.pickVoice(options);
    const format = options.outputFormat ?? OUTPUT_FORMATS[0]!;
    if (!isOutputFormat(format)) {
      throw new InvalidArgumentError({
        argument: 'outputFormat',
        message: `output format "${format}" is not available from ${this.modelId}; formats: ${OUTPUT_FORMATS.join(', ')}`,
      });
    }
    if (options.instructions !== undefined) {
      warnings.push({ type: 'unsupported', feature: 'instructions', details: 'eSpeak NG has no style instructions' });
    }
    const own = engineOptions(ESPEAK_SPEECH_ENGINE.options, options.providerOptions, this.provider);
    const speed = options.speed ?? own.speed;
    let wordsPerMinute: number | undefined;
    if (speed !== undefined) {
      if (!(speed > 0)) throw new InvalidArgumentError({ argument: 'speed', message: 'speed must be a positive number' });
      const wanted = BASE_WPM * speed;
      wordsPerMinute = Math.min(MAX_WPM, Math.max(MIN_WPM, wanted));
      if (wordsPerMinute !== wanted) {
        warnings.push({ type: 'compatibility', feature: 'speed', details: `clamped to ${(wordsPerMinute / BASE_WPM).toFixed(2)}` });
      }
    }
    const pitch = own.pitch === undefined ? undefined : Math.min(99, Math.max(0, own.pitch));

    const timestamp = new Date();
    const spoken = await speakInWorker({ text, voice, wordsPerMinute, pitch }, format, options.abortSignal);
    return {
      audio: spoken.bytes,
      warnings,
      usage: { characters: text.length },
      response: { timestamp, modelId: this.modelId },
      providerMetadata: {
        [this.provider]: { voice, format, sampleRate: spoken.sampleRate, durationSeconds: Math.round(spoken.durationSeconds * 1000) / 1000 },
      },
    };
  }

  /** The call's voice, else a voice for its language, else the default; unknown ones are refused. */
  private pickVoice(options: SpeechModelV4CallOptions): string {
    if (options.voice !== undefined) {
      if (!isEspeakVoice(options.voice)) throw unknownVoice(options.voice, 'voice');
      return options.voice;
    }
    if (options.language !== undefined && options.language !== 'auto') {
      const language = options.language.toLowerCase();
      if (!isEspeakVoice(language)) throw unknownVoice(language, 'language');
      return language;
    }
    return this.defaultVoice;
  }
}

function isOutputFormat(format: string): format is EspeakFileFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(format);
}

function unknownVoice(voice: string, argument: string): InvalidArgumentError {
  return new InvalidArgumentError({
    argument,
    message: `unknown eSpeak NG voice "${voice}"; voices: ${ESPEAK_VOICES.join(', ')} (a language may also take a variant such as +f1..+f5, +m1..+m7, +whisper)`,
  });
}

