// POST /api/v1/ai/images
import { ApiError } from '../errors.ts';
import { quoteImages } from '../pricing/quote.ts';
import { toUpstreamError } from '../providers/upstream-errors.ts';
import { loadAiSdk } from '../providers/ai-sdk.ts';
import { imageRequestSchema, imageResponseSchema, type ImageResponse } from './schemas.ts';
import { allowedOptions, exampleMediaUrl, type Endpoint } from './endpoint.ts';
import type { ImageModelConfig } from '../config/schema.ts';
import { offeredOrThrow, parseOrThrow } from './validate.ts';
import { storeAll } from './store-media.ts';
import { withCallTimeout } from '../lib/call-timeout.ts';
import { inspectImage, ownPngFacts, type ImageFacts } from '../media/inspect-image.ts';

export const imagesEndpoint: Endpoint = {
  path: '/api/v1/ai/images',
  capability: 'image',
  description: 'Generate images from a prompt',
  summary: 'Generate images from a prompt',
  requestSchema: imageRequestSchema,
  responseSchema: imageResponseSchema,
  example: (model, origin) => ({
    request: { model: model.id, prompt: 'A lighthouse at dusk', size: (model as ImageModelConfig).defaultSize, n: 1 },
    response: { model: model.id, images: [exampleMediaUrl(origin, 'image/png')] },
  }),
  prepare(body, { catalog, providers, media, mediaUrl }) {
    const request = parseOrThrow(imageRequestSchema, body);
    const model = catalog.resolve('image', request.model);
    const n = request.n ?? 1;
    if (n > model.maxN) {
      throw new ApiError(400, 'invalid_request', `n: at most ${model.maxN} images for model ${model.id}`, { field: 'n' });
    }
    const size = offeredOrThrow('size', request.size ?? model.defaultSize, model.sizes, model.id);
    const options = allowedOptions(model, request.options, providers.optionsSchema(model));
    return {
      model,
      amount: quoteImages(model, size, n),
      async run() {
        const settings = providers.settings(model);
        let files: { uint8Array: Uint8Array; mediaType: string }[];
        const { generateImage } = await loadAiSdk();
        try {
          const result = await withCallTimeout(settings.timeoutMs, undefined, (abortSignal) =>
            generateImage({
              model: providers.image(model),
              prompt: request.prompt,
              n,
              size: size as `${number}x${number}`,
              providerOptions: { [settings.providerOptionsKey]: options },
              maxRetries: settings.maxRetries,
              abortSignal,
            }),
          );
          files = result.images;
        } catch (error) {
          throw toUpstreamError(error, model.id);
        }
        if (files.length !== n) throw new ApiError(502, 'upstream_error', `model ${model.id} returned ${files.length} of ${n} images; nothing was charged`);
        // our own engine's PNGs are only read from their header; every other provider's output is decoded whole
        const inspect = providers.isEmbedded(model) ? ownPngFacts : inspectImage;
        const ids = await storeAll(media, await checkedImages(files, model.id, size, inspect));
        const response: ImageResponse = { model: model.id, images: ids.map(mediaUrl) };
        return { body: response, media: ids };
      },
    };
  },
};

/** Each file decoded and of the size paid for, typed by what its bytes are; else the model failed (502). */
async function checkedImages(
  files: { uint8Array: Uint8Array }[],
  modelId: string,
  size: string,
  inspect: (bytes: Uint8Array, paidSize: string) => ImageFacts | undefined | Promise<ImageFacts | undefined>,
) {
  return Promise.all(
    files.map(async ({ uint8Array }) => {
      const facts = await inspect(uint8Array, size);
      if (!facts) throw new ApiError(502, 'upstream_error', `model ${modelId} returned something that is not an image; nothing was charged`);
      const got = `${facts.width}x${facts.height}`;
      if (got !== size) throw new ApiError(502, 'upstream_error', `model ${modelId} returned a ${got} image, not the ${size} paid for; nothing was charged`);
      return { uint8Array, mediaType: facts.mediaType };
    }),
  );
}
