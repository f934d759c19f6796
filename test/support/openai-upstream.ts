// A local HTTP server speaking the OpenAI wire protocol, for tests of the openai-compatible provider path:
// POST /v1/chat/completions, POST /v1/images/generations (b64_json or url, per model or per test),
// POST /v1/audio/speech, and GET /files/<name> serving the PNGs it hands out by url.
// Faults are scripted per path (429 with retry-after, 500, delays, malformed JSON, a connection cut
// mid-body), and every request is recorded so a test can assert what the gateway sent.
// Chat with `stream: true` answers server-sent chat.completion.chunk events, one word of CHAT_TEXT each,
// as OpenAI streams (usage last when stream_options.include_usage); stream faults cut the connection or
// hold the stream open after some chunks, until released or closed by the gateway.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync, crc32 } from 'node:zlib';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** the raw request body */
  raw: string;
  /** the parsed JSON body, when it was JSON */
  body: Record<string, unknown> | undefined;
}

export type Fault =
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown; raw?: Buffer }
  /** waits, then answers normally (or as `then` says) */
  | { kind: 'delay'; ms: number }
  /** waits until release(), then answers as the next fault says (or normally): a generation the test ends */
  | { kind: 'hold' }
  /** 200 with a body that is not JSON */
  | { kind: 'malformed' }
  /** 200 headers (plus `headers`), part of the body, then the socket is destroyed */
  | { kind: 'cut'; headers?: Record<string, string> }
  /** a streamed chat: `afterChunks` events, then the socket is destroyed (a model failing mid-stream) */
  | { kind: 'stream-cut'; afterChunks: number }
  /**
   * a streamed chat: `afterChunks` events, then the opening of a tool call and `toolCallPieces` pieces of its
   * arguments when asked, then nothing until release() or the gateway closes the connection
   */
  | { kind: 'stream-hold'; afterChunks: number; toolCallPieces?: number }
  /**
   * A streamed chat that ignores max_tokens: `events` chunks of `text` each, then finish and [DONE]. Written as a
   * server honouring backpressure writes (waiting for 'drain'): `flood` says how far it got and whether it waits.
   */
  | { kind: 'stream-flood'; events: number; text: string; as?: 'content' | 'tool-arguments' };

export type ImageFormat = 'b64_json' | 'url';

export const CHAT_PATH = '/v1/chat/completions';
export const IMAGES_PATH = '/v1/images/generations';
export const SPEECH_PATH = '/v1/audio/speech';

/** Usage the chat endpoint reports; total_tokens is the provider's own count. */
export const CHAT_USAGE = { prompt_tokens: 23, completion_tokens: 11, total_tokens: 34 } as const;
export const CHAT_TEXT = 'The sea is large, salty and mostly blue.';

/**
 * The `providers` and `models` of a gateway config whose one chat model, `up/chat`, runs on this upstream (`baseURL`):
 * 1000 atomic units a call, nothing per token, unless `price` says otherwise.
 */
export function upstreamChatConfig(baseURL: string, options: { timeoutMs?: number; price?: Record<string, string> } = {}) {
  return {
    providers: { up: { type: 'openai-compatible', baseURL, maxRetries: 0, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) } },
    models: [
      {
        id: 'up/chat',
        provider: 'up',
        upstreamModel: 'm',
        capability: 'chat',
        maxTokens: 64,
        defaultMaxTokens: 16,
        price: options.price ?? { perRequest: '1000', perThousandOutputTokens: '0', perThousandInputChars: '0' },
      },
    ],
  };
}

export class OpenAIUpstream {
  readonly server: Server;
  readonly requests: RecordedRequest[] = [];
  /** image response format by upstream model name; models not listed use `defaultImageFormat` */
  readonly imageFormats = new Map<string, ImageFormat>();
  defaultImageFormat: ImageFormat = 'b64_json';
  /** origin of the image URLs handed out; this server by default */
  imageUrlBase: string | undefined;
  /** PNGs by size, one colour: what image requests return (their bytes, whichever format carries them) */
  private readonly pngs = new Map<string, Buffer>();
  /** the MP3 (or WAV when asked) speech returns */
  readonly mp3: Buffer = silentMp3(3);
  readonly wav: Buffer = silentWav(800);
  private readonly faults = new Map<string, { fault: Fault; remaining: number }[]>();
  private url_ = '';
  /** streams held open by a stream-hold fault and requests held by a hold fault, each resumed by calling it */
  private readonly held: Array<() => void> = [];
  /** streamed answers whose connection was closed by the gateway before their end */
  streamsClosedEarly = 0;
  /** streamed answers whose first event was written (a held stream counts once it holds) */
  streamsHolding = 0;
  /** the last stream-flood: bytes written, whether it waits for the gateway to read ('drain'), whether it finished */
  flood: { bytes: number; waiting: boolean; finished: boolean } = { bytes: 0, waiting: false, finished: false };

  constructor() {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url_ = `http://127.0.0.1:${port}`;
    return this;
  }

  get url(): string {
    return this.url_;
  }

  /** what a provider config's baseURL points at */
  get baseURL(): string {
    return `${this.url_}/v1`;
  }

  /** the PNG an image request for `size` (WxH) returns */
  png(size: string): Buffer {
    let png = this.pngs.get(size);
    if (!png) {
      const [width, height] = size.split('x').map(Number);
      this.pngs.set(size, (png = solidPng(width!, height!, [200, 80, 40])));
    }
    return png;
  }

  /** the next `times` requests to `path` get `fault` (queued after faults already scripted) */
  fail(path: string, fault: Fault, times = 1): void {
    const queue = this.faults.get(path) ?? [];
    queue.push({ fault, remaining: times });
    this.faults.set(path, queue);
  }

  /** requests received on a path (POSTs by default) */
  received(path: string, method = 'POST'): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path && r.method === method);
  }

  /** resumes every held stream and request */
  release(): void {
    for (const resume of this.held.splice(0)) resume();
  }

  /** forget recorded requests, scripted faults and per-test image formats */
  reset(): void {
    this.release();
    this.streamsClosedEarly = 0;
    this.streamsHolding = 0;
    this.requests.length = 0;
    this.faults.clear();
    this.imageFormats.clear();
    this.defaultImageFormat = 'b64_json';
    this.imageUrlBase = undefined;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private nextFault(path: string): Fault | undefined {
    const queue = this.faults.get(path);
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    if (--head.remaining <= 0) queue.shift();
    return head.fault;
  }

  private async streamChat(body: Record<string, unknown>, res: ServerResponse, fault: Fault | undefined): Promise<void> {
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const chunks = chatChunks(String(body.model ?? 'unknown'), includeUsage);
    let finished = false;
    res.on('close', () => {
      if (!finished) this.streamsClosedEarly++;
    });
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    if (fault?.kind === 'stream-flood') {
      await this.flood_(res, chunks, fault);
      finished = this.flood.finished;
      return;
    }
    for (const [index, chunk] of chunks.entries()) {
      if (fault?.kind === 'stream-cut' && index === fault.afterChunks) {
        res.socket?.destroy();
        return;
      }
      if (fault?.kind === 'stream-hold' && index === fault.afterChunks) {
        for (const piece of toolCallChunks(chunks[0]!, fault.toolCallPieces ?? 0)) await new Promise<void>((written) => res.write(piece, () => written()));
        this.streamsHolding++;
        await new Promise<void>((resume) => {
          this.held.push(resume);
          res.once('close', resume);
        });
        if (res.destroyed) return;
      }
      // each event leaves on its own write, as a model's tokens do
      await new Promise<void>((written) => res.write(chunk, () => written()));
    }
    finished = true;
    res.end();
  }

  private async flood_(res: ServerResponse, chunks: string[], fault: { events: number; text: string; as?: 'content' | 'tool-arguments' }): Promise<void> {
    const flood = { bytes: 0, waiting: false, finished: false };
    this.flood = flood;
    const [role, , ...rest] = chunks;
    // one tool call whose arguments come in `events` pieces, or text in `events` pieces
    const event = deltaEvent(role!, fault.as === 'tool-arguments' ? toolCallDelta({ arguments: fault.text }) : { content: fault.text });
    const opening = fault.as === 'tool-arguments' ? [deltaEvent(role!, toolCallDelta({ name: 'flood', arguments: '' }, 'call_flood'))] : [];
    const tail = rest.slice(CHAT_TEXT.split(/(?<= )/).length - 1);
    const send = async (chunk: string) => {
      flood.bytes += Buffer.byteLength(chunk);
      if (res.write(chunk)) return;
      flood.waiting = true;
      await new Promise<void>((resume) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resume();
        };
        res.on('drain', done).on('close', done);
      });
      flood.waiting = false;
    };
    await send(role!);
    for (const first of opening) await send(first);
    for (let i = 0; i < fault.events && !res.destroyed; i++) await send(event);
    for (const chunk of tail) if (!res.destroyed) await send(chunk);
    if (res.destroyed) return;
    flood.finished = true;
    res.end();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | undefined;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
    } catch {
      body = undefined;
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const method = req.method ?? 'GET';
    this.requests.push({ method, path, headers: req.headers, raw, body });

    const file = method === 'GET' ? /^\/files\/image-\d+-\d+-(\d+x\d+)\.png$/.exec(path) : null;
    if (file) {
      const png = this.png(file[1]!);
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(png.length) });
      res.end(png);
      return;
    }

    let fault = this.nextFault(path);
    while (fault?.kind === 'delay' || fault?.kind === 'hold') {
      if (fault.kind === 'hold') await new Promise<void>((resolve) => this.held.push(resolve));
      else await new Promise((resolve) => setTimeout(resolve, fault && 'ms' in fault ? fault.ms : 0));
      if (res.destroyed || req.socket.destroyed) return;
      fault = this.nextFault(path);
    }
    if (fault?.kind === 'status') {
      const payload = fault.body ?? { error: { message: `scripted ${fault.status}`, type: 'scripted_error', code: null } };
      if (fault.raw) {
        res.writeHead(fault.status, { 'Content-Length': String(fault.raw.length), ...fault.headers });
        res.end(fault.raw);
        return;
      }
      res.writeHead(fault.status, { 'Content-Type': 'application/json', ...fault.headers });
      res.end(JSON.stringify(payload));
      return;
    }
    if (fault?.kind === 'malformed') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"id": "chatcmpl-broken", "choices": [ {"message": ');
      return;
    }

    if (method === 'POST' && path === CHAT_PATH && body?.stream === true) {
      await this.streamChat(body, res, fault);
      return;
    }

    let status = 200;
    let contentType = 'application/json';
    let payload: Buffer;
    if (method === 'POST' && path === CHAT_PATH) {
      payload = Buffer.from(
        JSON.stringify({
          id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body?.model ?? 'unknown',
          choices: [{ index: 0, message: { role: 'assistant', content: CHAT_TEXT }, finish_reason: 'stop', logprobs: null }],
          usage: CHAT_USAGE,
        }),
      );
    } else if (method === 'POST' && path === IMAGES_PATH) {
      const model = String(body?.model ?? '');
      const n = Number(body?.n ?? 1);
      const size = /^\d+x\d+$/.test(String(body?.size)) ? String(body?.size) : '1024x1024';
      const format = this.imageFormats.get(model) ?? this.defaultImageFormat;
      const data = Array.from({ length: n }, (_, i) =>
        format === 'url'
          ? { url: `${this.imageUrlBase ?? this.url_}/files/image-${Date.now()}-${i}-${size}.png`, revised_prompt: body?.prompt }
          : { b64_json: this.png(size).toString('base64'), revised_prompt: body?.prompt },
      );
      payload = Buffer.from(JSON.stringify({ created: Math.floor(Date.now() / 1000), data }));
    } else if (method === 'POST' && path === SPEECH_PATH) {
      const wav = body?.response_format === 'wav';
      payload = wav ? this.wav : this.mp3;
      contentType = wav ? 'audio/wav' : 'audio/mpeg';
    } else {
      status = 404;
      payload = Buffer.from(JSON.stringify({ error: { message: `no route ${method} ${path}`, type: 'invalid_request_error' } }));
    }

    if (fault?.kind === 'cut') {
      res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': String(payload.length), ...fault.headers });
      res.write(payload.subarray(0, Math.max(1, Math.floor(payload.length / 2))), () => {
        // give the bytes a moment to leave, then cut the connection mid-body
        setTimeout(() => res.socket?.destroy(), 20);
      });
      return;
    }
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': String(payload.length) });
    res.end(payload);
  }
}

/** The chunks of a streamed CHAT_TEXT as OpenAI sends them: role, one per word, finish, then usage if asked. */
export function chatChunks(model: string, includeUsage: boolean): string[] {
  const head = { id: `chatcmpl-${Math.random().toString(36).slice(2)}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const event = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ ...head, choices, ...extra })}\n\n`;
  const words = CHAT_TEXT.split(/(?<= )/);
  return [
    event([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    ...words.map((word) => event([{ index: 0, delta: { content: word }, finish_reason: null }])),
    event([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    ...(includeUsage ? [event([], { usage: CHAT_USAGE })] : []),
    'data: [DONE]\n\n',
  ];
}

/** An event carrying `delta`, of the stream whose first event (its role) is `roleChunk`. */
function deltaEvent(roleChunk: string, delta: unknown): string {
  const head = JSON.parse(roleChunk.slice('data: '.length)) as Record<string, unknown>;
  return `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
}

/** A delta of the answer's one tool call: its opening (with `id`) names it, the others carry pieces of its arguments. */
function toolCallDelta(fn: Record<string, string>, id?: string) {
  return { tool_calls: [{ index: 0, ...(id ? { id, type: 'function' } : {}), function: fn }] };
}

/** The opening of a tool call and `pieces` pieces of its arguments, as events of the stream `roleChunk` opened; none for 0. */
function toolCallChunks(roleChunk: string, pieces: number): string[] {
  if (pieces === 0) return [];
  const piece = deltaEvent(roleChunk, toolCallDelta({ arguments: '{"a":' }));
  return [deltaEvent(roleChunk, toolCallDelta({ name: 'held', arguments: '' }, 'call_held')), ...Array.from({ length: pieces }, () => piece)];
}

export async function startOpenAIUpstream(): Promise<OpenAIUpstream> {
  return new OpenAIUpstream().start();
}

/** A valid RGB PNG of one colour. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed) >>> 0);
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** `frames` silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, 417 bytes each). */
export function silentMp3(frames: number): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** A PCM WAV of `samples` silent 16-bit mono samples at 16 kHz. */
export function silentWav(samples: number): Buffer {
  const data = samples * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}
