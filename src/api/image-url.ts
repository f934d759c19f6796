// An image a client gives by URL (OpenAI's image_url / input_image, Anthropic's url source) as the AI SDK's
// image part: a data: URL decoded to its bytes here; an http(s) URL kept as a URL, fetched at call time by the
// chat call's bounded downloader (never by a provider). Anything else is a 400 naming the field.
import type { ImagePart } from 'ai';
import { ApiError } from '../errors.ts';

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([a-z0-9+/=\s]*)$/i;

export function imagePartOfUrl(url: string, field: string): ImagePart {
  const data = DATA_URL.exec(url);
  if (data) return { type: 'image', image: Buffer.from(data[2]!, 'base64'), mediaType: data[1]!.toLowerCase() };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badImage(field);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw badImage(field);
  return { type: 'image', image: parsed };
}

export function imagePartOfBase64(data: string, mediaType: string): ImagePart {
  return { type: 'image', image: Buffer.from(data, 'base64'), mediaType };
}

function badImage(field: string): ApiError {
  return new ApiError(400, 'invalid_request', `${field}: an image is a data:image/...;base64 URL or an http(s) URL`, { field });
}
