// Which model a request names at the gateway. An agent left at its defaults names its vendor's model (Claude Code:
// claude-opus-…, Codex: gpt-…), which this gateway does not sell and would refuse with a 400: such a request is sent
// with the gateway's chat model instead (`--model`, else the first chat model its catalog lists), and the answer says
// so in X-Model-Substituted; an image or speech model it does not sell, with its first image or speech model. A model
// the gateway sells passes as it is, the body untouched.
import { firstChatModel, readModels, type ListedModel } from '../catalog.ts';

/** the routes whose body names a chat model */
export const CHAT_PATHS = new Set(['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/messages/count_tokens']);

export const SUBSTITUTED_HEADER = 'X-Model-Substituted';

export interface ChatModels {
  /** every model id the gateway's catalog lists */
  known: ReadonlySet<string>;
  /** the chat model a request naming an unknown one is sent with; none: such a request goes as it is (and is refused) */
  fallback: string | undefined;
  /**
   * the same for images and speech, by path: the gateway's first model of each (OpenAI's SDK makes a speech caller
   * name a model: tts-1, gpt-4o-mini-tts)
   */
  media?: Readonly<Record<string, string | undefined>>;
}

/** the routes whose body names an image or speech model, and the capability of that model */
const MEDIA_PATHS: Readonly<Record<string, string>> = { '/v1/images/generations': 'image', '/v1/audio/speech': 'speech' };

/** The model a request to `path` naming an unknown one is sent with; undefined: it goes as it is. */
export function fallbackFor(models: ChatModels, path: string): string | undefined {
  return CHAT_PATHS.has(path) ? models.fallback : models.media?.[path];
}

/** The gateway's catalog, and the chat model to fall back on: `chosen`, else its first chat model. */
export async function gatewayChatModels(gateway: string, chosen?: string): Promise<ChatModels> {
  let models: ListedModel[] = [];
  try {
    models = (await readModels(gateway, (url) => fetch(url, { signal: AbortSignal.timeout(5000) }))).models ?? [];
  } catch {
    // the gateway is not reachable yet: requests go as they are, and the gateway's own answer says what is wrong
  }
  const media = Object.fromEntries(Object.entries(MEDIA_PATHS).map(([path, capability]) => [path, models.find((model) => model.capability === capability)?.id]));
  return { known: new Set(models.map((model) => model.id)), fallback: chosen ?? firstChatModel(models)?.id, media };
}

/** a "model" field naming a string */
const MODEL_FIELD = /"model"\s*:\s*"((?:[^"\\]|\\.)*)"/;

/**
 * The top-level model of a body whose first "model" field sits at the top (agents put it first), found without
 * parsing the body whole; undefined when it cannot be told that way.
 */
function leadingModel(body: Buffer): string | undefined {
  const text = body.toString('utf8', 0, Math.min(body.length, 4096));
  const match = MODEL_FIELD.exec(text);
  if (!match) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < match.index; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') depth--;
  }
  // the string's JSON escapes read as JSON.parse reads them
  return depth === 1 && !inString ? (JSON.parse(`"${match[1]}"`) as string) : undefined;
}

/** The model a request body names: read from its head when the field leads (agents put it first), else parsed whole. */
export function requestModel(body: Buffer): string | undefined {
  const leading = leadingModel(body);
  if (leading !== undefined) return leading;
  try {
    const model = (JSON.parse(body.toString('utf8')) as { model?: unknown }).model;
    return typeof model === 'string' ? model : undefined;
  } catch {
    return undefined;
  }
}

/** The body to send: the same bytes when its model is one the gateway sells, else `fallback` put in its place. */
export function withGatewayModel(body: Buffer, models: ChatModels, fallback = models.fallback): { body: Buffer; substituted?: string } {
  if (!fallback) return { body };
  const named = leadingModel(body);
  if (named !== undefined && models.known.has(named)) return { body };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { body }; // not JSON: the gateway's own 400 says so
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { body };
  const request = parsed as { model?: unknown };
  if (typeof request.model !== 'string' || models.known.has(request.model)) return { body };
  const substituted = `${request.model} -> ${fallback}`;
  return { body: Buffer.from(JSON.stringify({ ...request, model: fallback })), substituted };
}
