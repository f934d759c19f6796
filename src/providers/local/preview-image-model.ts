// An AI SDK image model (ImageModelV4, what `generateImage` of ai@7 calls natively) that is not AI:
// it hashes (prompt, size, index, seed) and draws a deterministic abstract picture, rendered from
// SVG to PNG by sharp. It lets the gateway serve, price and store images with no model at all.

import { createHash } from 'node:crypto';
import { loadSharp } from '../../media/load-sharp.ts';
import {
  InvalidArgumentError,
  UnsupportedFunctionalityError,
  type ImageModelV4,
  type ImageModelV4CallOptions,
  type ImageModelV4Result,
  type SharedV4Warning,
} from '@ai-sdk/provider';
import { previewSvg } from './preview-art.ts';
import { engineOptions } from './engine-options.ts';
import { PREVIEW_IMAGE_ENGINE } from '../../config/engines.ts';

/** Bounds of any size the model draws (the catalog offers a few of them). */
const MIN_SIDE = 16;
const MAX_SIDE = 2048;
/**
 * Images per doGenerate call. Larger than the catalog's maxN on purpose: when generateImage splits a
 * request into several calls, each call restarts at index 0 and would repeat the same pictures.
 */
const MAX_IMAGES_PER_CALL = 16;

export interface PreviewImageModelSettings {
  /** model id reported to the AI SDK; default `preview-image` */
  modelId?: string;
  /** `WxH` used when the call gives neither size nor aspect ratio; default 512x512 */
  defaultSize?: string;
}

export class PreviewImageModel implements ImageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = PREVIEW_IMAGE_ENGINE.provider;
  readonly modelId: string;
  readonly maxImagesPerCall = MAX_IMAGES_PER_CALL;
  readonly supportsFileInputs = false;
  readonly supportsMaskInputs = false;
  private readonly defaultSize: { width: number; height: number };

  constructor(settings: PreviewImageModelSettings = {}) {
    this.modelId = settings.modelId ?? PREVIEW_IMAGE_ENGINE.id;
    this.defaultSize = parseSize(settings.defaultSize ?? PREVIEW_IMAGE_ENGINE.defaultSize, 'defaultSize');
  }

  async doGenerate(options: ImageModelV4CallOptions): Promise<ImageModelV4Result> {
    const warnings: SharedV4Warning[] = [];
    if (options.files?.length || options.mask) {
      throw new UnsupportedFunctionalityError({ functionality: 'image editing', message: `${this.modelId} only draws new images` });
    }
    if (!Number.isInteger(options.n) || options.n < 1 || options.n > MAX_IMAGES_PER_CALL) {
      throw new InvalidArgumentError({ argument: 'n', message: `n must be 1 to ${MAX_IMAGES_PER_CALL}` });
    }
    let size = this.defaultSize;
    if (options.size !== undefined) {
      size = parseSize(options.size, 'size');
      if (options.aspectRatio !== undefined) warnings.push({ type: 'unsupported', feature: 'aspectRatio', details: 'size is used' });
    } else if (options.aspectRatio !== undefined) {
      size = sizeForAspectRatio(options.aspectRatio);
    }
    const prompt = options.prompt ?? '';
    options.abortSignal?.throwIfAborted();

    const timestamp = new Date();
    const seed = options.seed ?? engineOptions(PREVIEW_IMAGE_ENGINE.options, options.providerOptions, this.provider).seed;
    const seeds = Array.from({ length: options.n }, (_, index) => pictureSeed(prompt, size, index, seed));
    const sharp = await loadSharp();
    const images = await Promise.all(
      seeds.map(async (seed) => {
        const svg = previewSvg(seed, size.width, size.height);
        const png = await sharp(Buffer.from(svg)).png().toBuffer();
        return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
      }),
    );
    return {
      images,
      warnings,
      response: { timestamp, modelId: this.modelId, headers: undefined },
      providerMetadata: {
        [this.provider]: { images: seeds.map((seed) => ({ seed: Buffer.from(seed).toString('hex').slice(0, 16) })) },
      },
    };
  }
}

/** The picture's seed: a digest of everything that defines it, so each is reproducible alone. */
function pictureSeed(prompt: string, size: { width: number; height: number }, index: number, seed: number | undefined): Uint8Array {
  const key = JSON.stringify(['preview-image/v1', prompt, size.width, size.height, index, seed ?? null]);
  return createHash('sha256').update(key).digest();
}

function parseSize(size: string, argument: string): { width: number; height: number } {
  const match = /^(\d+)x(\d+)$/.exec(size);
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (!match || width < MIN_SIDE || height < MIN_SIDE || width > MAX_SIDE || height > MAX_SIDE) {
    throw new InvalidArgumentError({
      argument,
      message: `size "${size}" is not WIDTHxHEIGHT with sides from ${MIN_SIDE} to ${MAX_SIDE} pixels`,
    });
  }
  return { width, height };
}

/** Fits the ratio in a 1024x1024 box, the longer side 1024 pixels. */
function sizeForAspectRatio(ratio: string): { width: number; height: number } {
  const match = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(ratio);
  const w = Number(match?.[1]);
  const h = Number(match?.[2]);
  if (!match || !(w > 0) || !(h > 0) || Math.max(w / h, h / w) > MAX_SIDE / MIN_SIDE) {
    throw new InvalidArgumentError({ argument: 'aspectRatio', message: `aspect ratio "${ratio}" is not W:H` });
  }
  const long = 1024;
  return w >= h ? { width: long, height: Math.round((long * h) / w) } : { width: Math.round((long * w) / h), height: long };
}
