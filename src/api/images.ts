// POST /api/v1/ai/images
import { generateImage } from 'ai';
import { ApiError } from '../errors.ts';
import { quoteImages } from '../pricing/quote.ts';
import { toUpstreamError } from '../providers/upstream-errors.ts';
import { imageRequestSchema, imageResponseSchema, type ImageResponse } from './schemas.ts';
import { allowedOptions, type Endpoint } from './endpoint.ts';
import { offeredOrThrow, parseOrThrow } from './validate.ts';
import { storeAll } from './store-media.ts';

export const imagesEndpoint: Endpoint = {
  path: '/api/v1/ai/images',
  capability: 'image',
  description: 'Generate images from a prompt',
  summary: 'Generate images from a prompt',
  requestSchema: imageRequestSchema,
  responseSchema: imageResponseSchema,
  prepare(body, { catalog, providers, media, mediaUrl }) {
    const request = parseOrThrow(imageRequestSchema, body);
    const model = catalog.resolve('image', request.model);
    const n = request.n ?? 1;
    if (n > model.maxN) {
      throw new ApiError(400, 'invalid_request', `n: at most ${model.maxN} images for model ${model.id}`, { field: 'n' });
    }
    const size = offeredOrThrow('size', request.size ?? model.defaultSize, model.sizes, model.id);
    const options = allowedOptions(model, request.options);
    return {
      model,
      amount: quoteImages(model, size, n),
      async run() {
        const settings = providers.settings(model);
        let files: { uint8Array: Uint8Array; mediaType: string }[];
        try {
          const result = await generateImage({
            model: providers.image(model),
            prompt: request.prompt,
            n,
            size: size as `${number}x${number}`,
            providerOptions: { [settings.providerOptionsKey]: options },
            maxRetries: settings.maxRetries,
            abortSignal: AbortSignal.timeout(settings.timeoutMs),
          });
          files = result.images;
        } catch (error) {
          throw toUpstreamError(error, model.id);
        }
        if (files.length !== n) throw new ApiError(502, 'upstream_error', `model ${model.id} returned ${files.length} of ${n} images`);
        const ids = await storeAll(media, files);
        const response: ImageResponse = { model: model.id, images: ids.map(mediaUrl) };
        return { body: response, media: ids };
      },
    };
  },
};
