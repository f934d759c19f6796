// POST /v1/images/generations: OpenAI's image request run as /api/v1/ai/images runs it (same model, sizes,
// price, checks and media store), answered as { created, data: [{ url } | { b64_json }] }. Both formats
// keep the files: the url is this service's /media/<id>, and a b64_json answer's files stay fetchable too.
import { imagesEndpoint } from '../images.ts';
import type { EndpointContext, PreparedCall } from '../endpoint.ts';
import { withFallback } from '../fallback.ts';
import type { ImageResponse } from '../schemas.ts';
import { parseRequest } from '../validate.ts';
import { RequestNotes } from '../request-notes.ts';
import { IMAGE_FIELD_RULES, openaiImageRequestSchema, type OpenAIImageResponse } from './schemas.ts';

export function prepareImageGeneration(body: unknown, context: EndpointContext): PreparedCall {
  const notes = new RequestNotes();
  const request = parseRequest(openaiImageRequestSchema, body, { style: 'brackets', notes, rules: IMAGE_FIELD_RULES });
  const spec = { model: request.model, prompt: request.prompt, n: request.n ?? undefined, size: request.size === 'auto' ? undefined : (request.size ?? undefined) };
  const prepared = withFallback(imagesEndpoint, spec, context, imagesEndpoint.prepare(spec, context));
  return {
    ...prepared,
    notes,
    async run() {
      const result = await prepared.run();
      const urls = (result.body as ImageResponse).images;
      const data =
        request.response_format === 'b64_json'
          ? await Promise.all(result.media.map(async (id) => ({ b64_json: await base64Of(context, id) })))
          : urls.map((url) => ({ url }));
      const response: OpenAIImageResponse = { created: Math.floor(Date.now() / 1000), data };
      return { ...result, body: response };
    },
  };
}

async function base64Of({ media }: EndpointContext, id: string): Promise<string> {
  const bytes = Buffer.from(await new Response(await media.read(id)).arrayBuffer());
  return bytes.toString('base64');
}
