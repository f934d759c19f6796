// The one validated configuration object. Every field has a default that runs offline (sandbox mode).
import { isIP } from 'node:net';
import { z } from 'zod';
import { NETWORK_NAMES } from '../x402/networks.ts';
import { isProxyEntry } from '../lib/proxy-entry.ts';
import { AUDIO_FORMATS, speechProviderFormats } from './engines.ts';

/** Every network runs in the sandbox: anvil for EVM networks, litesvm for Solana. */
export const SANDBOX_NETWORK_NAMES = NETWORK_NAMES;

/** Integer amount in USDC atomic units (6 decimals), written as a string: "10000" = 0.01 USDC. */
export const atomicAmount = z
  .union([z.string(), z.number().int().nonnegative()])
  .transform((value) => String(value))
  .pipe(z.string().regex(/^\d{1,30}$/, 'an integer amount in atomic units (e.g. "10000" = 0.01 USDC)'));

const networkName = z.enum(NETWORK_NAMES);

/** an IP address (IPv6 with or without brackets) or a DNS host name; no scheme, port or path */
const hostName = z.string().refine(
  (text) => isIP(text.replace(/^\[(.*)\]$/, '$1')) !== 0 || /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/.test(text),
  { error: (issue) => `${JSON.stringify(issue.input)} is not an IP address or host name (no scheme, port or path: e.g. 0.0.0.0, localhost)` },
);

const CAPABILITIES = ['chat', 'image', 'speech'] as const;
/** a capability, a network, or network:capability (payments/settle-first.ts) */
const settleFirstRule = z.enum([
  ...CAPABILITIES,
  ...NETWORK_NAMES,
  ...NETWORK_NAMES.flatMap((network) => CAPABILITIES.map((capability) => `${network}:${capability}`)),
]);

const localFacilitator = z.object({
  type: z.literal('local'),
  rpcUrl: z.url(),
  /** name of the environment variable holding the settlement (EVM) or fee-payer (Solana) secret key */
  secretKeyEnv: z.string().min(1),
});
const remoteFacilitator = z.object({
  type: z.literal('remote'),
  url: z.url(),
  /** name of an environment variable whose value is sent as the Authorization header */
  authorizationEnv: z.string().optional(),
  timeoutMs: z.number().int().positive().default(30_000),
  /**
   * payment channels: name of an environment variable holding an EVM key that is the channels' receiverAuthorizer
   * (it signs claims and refunds here, docs/channels.md); unset, that role is delegated to the facilitator's
   */
  receiverAuthorizerKeyEnv: z.string().min(1).optional(),
});

const networkConfig = z.object({
  payTo: z.string().min(1),
  /** defaults to the network's USDC */
  asset: z.string().optional(),
  /** EIP-712 domain of the asset (EVM); defaults to USDC's on that network */
  eip712: z.object({ name: z.string(), version: z.string() }).optional(),
  facilitator: z.discriminatedUnion('type', [localFacilitator, remoteFacilitator]),
  /**
   * the metered `upto` scheme beside `exact` (EVM only; payments/upto-offer.ts): "auto" offers it where it can be
   * paid (local: Permit2 and the upto proxy have code, checked at startup; remote: its /supported lists upto),
   * "on" insists (local: no code check; remote: startup stops unless /supported lists it), "off" never
   */
  upto: z.enum(['auto', 'on', 'off']).default('auto'),
  /**
   * payment channels, the x402 `batch-settlement` scheme, beside `exact` (EVM only;
   * docs/channels.md): "auto" offers them where the escrow and its deposit collectors have code (checked at
   * startup), "on" without that check, "off" never
   */
  channels: z.enum(['auto', 'on', 'off']).default('auto'),
});
export type NetworkConfig = z.infer<typeof networkConfig>;

const price = {
  chat: z.object({
    perRequest: atomicAmount,
    /** per 1000 tokens of max_tokens (the most the answer may cost) */
    perThousandOutputTokens: atomicAmount,
    /** per 1000 characters of prompt text */
    perThousandInputChars: atomicAmount,
  }),
  image: z.object({
    /** price of one image, per allowed size */
    perImageBySize: z.record(z.string().regex(/^\d+x\d+$/), atomicAmount),
  }),
  speech: z.object({
    perRequest: atomicAmount,
    perThousandChars: atomicAmount,
  }),
};

/**
 * Option names no catalog entry may pass to a provider: they would redirect or re-authenticate the call, or
 * change what the quote priced or checked (the model, the conversation or text, how many, how large, how
 * long, which voice or format). The API refuses them in a request whatever the catalog says.
 */
const NEVER_PASSED = new Set(
  'baseurl apikey header headers url endpoint organization project authorization fetch model messages prompt input text n size voice maxtokens maxcompletiontokens maxoutputtokens responseformat outputformat stream streamoptions'.split(' '),
);

/** Whether an option name is one of those, in any spelling (case, `_` or `-`: max_tokens, maxTokens, Max-Tokens). */
export function isNeverPassedOption(key: string): boolean {
  return NEVER_PASSED.has(key.toLowerCase().replace(/[_-]/g, ''));
}

const modelBase = {
  id: z.string().regex(/^[A-Za-z0-9._:/-]{1,100}$/),
  /** provider name: a key of `providers`, or one of the embedded engines */
  provider: z.string().min(1),
  /** the model id at the provider; defaults to `id` */
  upstreamModel: z.string().optional(),
  label: z.string().default(''),
  /** option keys a client may pass through in `options` */
  allowedOptions: z
    .array(z.string().refine((key) => !isNeverPassedOption(key), { error: (issue) => `${String(issue.input)} can never be passed as an option` }))
    .default([]),
  /** another model of the same capability to try when this one fails (never a pricier one) */
  fallback: z.string().optional(),
};

export const chatModel = z.object({
  ...modelBase,
  capability: z.literal('chat'),
  /** local-llama only: the GGUF file to run; default the built-in demo model */
  modelPath: z.string().optional(),
  maxTokens: z.number().int().positive(),
  defaultMaxTokens: z.number().int().positive(),
  /**
   * the largest prompt a request may send, in characters of all its messages plus PROMPT_CHARS_PER_MESSAGE for
   * each message (its role markers): set it from the model's context so a prompt that cannot fit is refused (400)
   * before any quote; unset, only the body limit bounds it
   */
  maxInputChars: z.number().int().positive().optional(),
  /**
   * what the model can honour beyond plain text (docs/agent-chat.md); a request using what it lacks is a 400
   * naming the field, before any price. Upstream defaults: tools, JSON schemas and streaming yes, images no.
   */
  supports: z
    .object({
      tools: z.boolean().default(true),
      jsonSchema: z.boolean().default(true),
      vision: z.boolean().default(false),
      streaming: z.boolean().default(true),
    })
    .strict()
    .prefault({}),
  /** prompt characters one image part counts as, in the quote and in maxInputChars (~750 tokens at 4 characters a token) */
  imageInputChars: z.number().int().nonnegative().default(3000),
  /**
   * under `upto`, the share of the prompt the model reports as read from its cache is charged at this percentage
   * of the input price (cache reads cost less upstream: OpenAI bills them at 10-50%, Anthropic at 10%)
   */
  cachedInputPercent: z.number().int().min(0).max(100).default(100),
  price: price.chat,
});
export const imageModel = z.object({
  ...modelBase,
  capability: z.literal('image'),
  sizes: z.array(z.string().regex(/^\d+x\d+$/)).min(1),
  defaultSize: z.string(),
  maxN: z.number().int().positive(),
  price: price.image,
});
const audioFormat = z.enum(AUDIO_FORMATS);
export const speechModel = z
  .object({
    ...modelBase,
    capability: z.literal('speech'),
    voices: z.array(z.string()).min(1),
    defaultVoice: z.string(),
    /** audio file formats a client may ask for; default: what the provider gives (see speechProviderFormats) */
    formats: z.array(audioFormat).min(1).optional(),
    /** default: the first of formats */
    defaultFormat: audioFormat.optional(),
    maxTextLength: z.number().int().positive(),
    price: price.speech,
  })
  .transform((model) => {
    const formats = model.formats ?? [...speechProviderFormats(model.provider).unlisted];
    return { ...model, formats, defaultFormat: model.defaultFormat ?? formats[0]! };
  });
export const modelConfig = z.discriminatedUnion('capability', [chatModel, imageModel, speechModel]);
export type ChatModelConfig = z.infer<typeof chatModel>;
export type ImageModelConfig = z.infer<typeof imageModel>;
export type SpeechModelConfig = z.infer<typeof speechModel>;
export type ModelConfig = z.infer<typeof modelConfig>;
export type Capability = ModelConfig['capability'];

const upstreamProvider = z.object({
  /**
   * the wire protocol: openai-compatible (OpenAI, OpenRouter, Together, Groq, vLLM, Ollama, ...: chat, images,
   * speech) or anthropic (Anthropic's Messages API, e.g. https://api.anthropic.com/v1: chat only)
   */
  type: z.enum(['openai-compatible', 'anthropic']),
  baseURL: z.url(),
  /** name of the environment variable holding the API key */
  apiKeyEnv: z.string().optional(),
  timeoutMs: z.number().int().positive().default(60_000),
  maxRetries: z.number().int().min(0).max(5).default(2),
  /** largest upstream response accepted, API answers and images fetched from URLs the upstream returns */
  maxResponseBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
});

const fileMediaStore = z.object({
  /** files under <dataDir>/media */
  store: z.literal('file'),
});
const s3MediaStore = z.object({
  /** an S3-compatible bucket (AWS S3, MinIO, R2, ...) */
  store: z.literal('s3'),
  bucket: z.string().min(1),
  /** the store's endpoint, for S3-compatible services; omitted for AWS */
  endpoint: z.url().optional(),
  region: z.string().min(1),
  /** bucket in the path rather than the host name; most S3-compatible stores want this */
  forcePathStyle: z.boolean().default(false),
  /** names of the environment variables holding the credentials */
  accessKeyIdEnv: z.string().min(1),
  secretAccessKeyEnv: z.string().min(1),
  /** key prefix for media objects, e.g. "media/" */
  prefix: z.string().default(''),
});
export const mediaConfig = z.discriminatedUnion('store', [fileMediaStore, s3MediaStore]);
export type MediaConfig = z.infer<typeof mediaConfig>;

/** 1 to 32 printable ASCII characters (x402 bazaar's rule for a service name or a tag) */
const printableAscii = z.string().regex(/^[\x20-\x7E]{1,32}$/, '1 to 32 printable ASCII characters');
const DEFAULT_SERVICE = {
  name: 'x402 AI gateway',
  description: 'Chat completions, image generation and text-to-speech, paid per request in USDC through x402.',
  tags: ['ai', 'chat', 'image-generation', 'text-to-speech'],
};

export const configSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(4021),
    /** absolute base URL clients reach us at (behind a proxy); else derived from the request */
    publicUrl: z.url().optional(),
    /**
     * addresses (or CIDR ranges, e.g. "10.0.0.0/8") of the reverse proxies in front: only a request whose
     * connection comes from one of them has its X-Forwarded-Proto/Host believed. Default none: URLs come from
     * publicUrl, else the address the connection was accepted on.
     */
    trustedProxies: z
      .array(z.string().refine(isProxyEntry, { error: (issue) => `${String(issue.input)} is not an IP address or CIDR range` }))
      .default([]),
    dataDir: z.string().default('.data'),
    /**
     * PostgreSQL connection string for the payments ledger (postgres://user:pass@host:5432/db), shared by every
     * instance behind a load balancer. Unset: the embedded SQLite ledger in dataDir (one instance only).
     */
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// connection string')
      .optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * OpenTelemetry traces of the paid calls (docs/observability.md), exported over OTLP/HTTP (JSON). Off unless
     * `endpoint` is set (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT is).
     */
    tracing: z
      .object({
        /** the OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces; absent: tracing is off */
        endpoint: z.url().optional(),
        serviceName: z.string().min(1).default('x402-ai-gateway'),
        /** how long finished spans wait to be exported together */
        exportDelayMs: z.number().int().positive().default(5_000),
      })
      .default({ serviceName: 'x402-ai-gateway', exportDelayMs: 5_000 }),
    /**
     * json: one JSON object a line, for machines; pretty: readable lines for a person (LOG_FORMAT).
     * Unset: pretty when stdout is a terminal, else json.
     */
    logFormat: z.enum(['json', 'pretty']).optional(),
    bodyLimitBytes: z.number().int().positive().default(256 * 1024),
    /**
     * Sandbox mode: local chains with test USDC for every network listed here, started in-process.
     * On by default; turned off as soon as real `networks` are configured.
     */
    sandbox: z
      .object({
        enabled: z.boolean().optional(),
        networks: z.array(networkName).default([...SANDBOX_NETWORK_NAMES]),
        /** the interface the sandbox chains' JSON-RPC listen on (SANDBOX_HOST); 0.0.0.0 in a container */
        host: hostName.default('127.0.0.1'),
        /**
         * the first chain's port (SANDBOX_PORT_BASE); the n-th network of `networks` listens on portBase + n, so
         * a container can publish them. Unset: ports the OS picks.
         */
        portBase: z.number().int().min(1).max(65535).optional(),
        /**
         * the host name or IP buyers reach the chains at (SANDBOX_PUBLIC_HOST), put in the RPC URLs /healthz hands
         * out: the Docker host's name when the ports are published. Unset: the address the service itself uses.
         */
        publicHost: hostName.optional(),
        /**
         * keep each chain's state (balances, contracts) and the sandbox's keys under dataDir/sandbox/ across
         * restarts (SANDBOX_KEEP_STATE); false: fresh chains and keys at every start. Delete that folder to reset.
         */
        keepState: z.boolean().optional(),
      })
      .refine((sandbox) => sandbox.portBase === undefined || sandbox.portBase + sandbox.networks.length - 1 <= 65535, {
        error: 'portBase + the number of sandbox networks must stay within 65535',
        path: ['portBase'],
      })
      .optional(),
    networks: z.partialRecord(networkName, networkConfig).default({}),
    /** seconds a client has to complete payment, per capability (Solana blockhashes live ~60-90 s) */
    maxTimeoutSeconds: z
      .object({
        chat: z.number().int().positive(),
        image: z.number().int().positive(),
        speech: z.number().int().positive(),
      })
      .default({ chat: 60, image: 120, speech: 60 }),
    /**
     * paid calls settled BEFORE the work runs (long work vs. a short-lived proof, e.g. a Solana blockhash):
     * rules naming a capability ("image"), a network ("solana") or both ("solana:image"); see
     * payments/settle-first.ts. If such work then fails, the payment stays settled and a retry of the same
     * proof runs the work again at no charge; the default settles only after the result is stored.
     */
    settleFirst: z.array(settleFirstRule).default([]),
    /** how long a settlement may wait for confirmation before it is treated as 'unknown' */
    settlementTimeoutMs: z.number().int().positive().default(30_000),
    /**
     * EVM exact settlements that queue up while the settlement key is sending go out together in one Multicall3
     * aggregate3 transaction, each transfer allowed to fail alone (needs Multicall3 at its canonical address;
     * the sandbox places it). Off by default: measured, it did not pay on the sandbox chain (docs/performance.md, "Settlement batching").
     */
    settlementBatching: z.boolean().default(false),
    /**
     * payment channels (x402 batch-settlement; docs/channels.md): the withdraw delay channels are opened with
     * (seconds, 15 minutes to 30 days), and when the claimer claims the charged vouchers and settles them to
     * payTo: every `claimIntervalMs` it claims once `claimThreshold` (atomic units) is unclaimed on a network,
     * or a charge waited `claimMaxAgeMs`, or a payer started a withdrawal (keep claimMaxAgeMs well below the
     * withdraw delay); `maxClaimsPerBatch` channels per claim transaction; `depositMethod` how payers deposit:
     * "eip3009" (the token's receiveWithAuthorization, USDC's) or "permit2" (a Permit2 witness transfer, for
     * tokens without ERC-3009; a payer without a Permit2 allowance signs an EIP-2612 permit with it)
     */
    channels: z
      .object({
        withdrawDelay: z.number().int().min(900).max(2_592_000).default(900),
        depositMethod: z.enum(['eip3009', 'permit2']).default('eip3009'),
        claimIntervalMs: z.number().int().positive().default(60_000),
        claimThreshold: z.string().regex(/^\d{1,30}$/, 'atomic units, a decimal string').default('1000000'),
        claimMaxAgeMs: z.number().int().positive().default(300_000),
        maxClaimsPerBatch: z.number().int().min(1).max(500).default(100),
      })
      .refine((c) => c.claimMaxAgeMs + c.claimIntervalMs < c.withdrawDelay * 1000, {
        message: 'claimMaxAgeMs + claimIntervalMs must stay below the withdraw delay, or a withdrawal could complete before its claim',
      })
      .default({ withdrawDelay: 900, depositMethod: 'eip3009', claimIntervalMs: 60_000, claimThreshold: '1000000', claimMaxAgeMs: 300_000, maxClaimsPerBatch: 100 }),
    /** how often pending settlements are reconciled */
    reconcileIntervalMs: z.number().int().positive().default(15_000),
    /** how often each network's payment readiness (asset code, gas, fee payer, token accounts) is checked again */
    readinessCheckIntervalMs: z.number().int().min(1_000).default(60_000),
    /**
     * an instance reconciling a pending payment holds it this long (instances sharing a database never check one
     * payment at once; a check outliving it is abandoned); a payment whose instance died mid-check waits this long
     */
    reconcileLeaseMs: z.number().int().positive().default(5_000),
    /**
     * a pending payment updated more recently than this is left to the request that may still be settling it.
     * 0 (default) is safe with the built-in facilitators, whose checks tell "in flight" from "failed"; raise it
     * to spare the RPC calls a check of an in-flight settlement costs.
     */
    settlingGraceMs: z.number().int().nonnegative().default(0),
    /**
     * a reservation this old that never reached settlement belongs to a request that died (a crash mid-work);
     * it is released so its proof can be used again. Keep it above the slowest generation.
     */
    abandonedAfterMs: z.number().int().positive().default(10 * 60_000),
    /**
     * a reservation is held by its instance this long past that instance's last heartbeat (sent every quarter of
     * it): a reservation of an instance that died mid-work is taken over by the next use of its proof, or
     * released, this long after the death, whatever abandonedAfterMs says. Keep it above the longest event-loop stall.
     */
    reservationLeaseMs: z.number().int().min(1_000).default(10_000),
    /**
     * A paid call whose work fails (upstream error, model failure) is never charged and its proof is released, so
     * the same proof may be sent again: its work may fail `unsettled` times in all, then the proof is refused
     * (402 payment_attempts_exhausted; a new payment is needed). Settled first (settleFirst), each retry of the
     * proof reruns the paid-for work at no charge: it may fail `settled` times, then the payment stays settled
     * without a result, marked payment_attempts_exhausted in the ledger for the operator to refund.
     */
    maxFailedAttempts: z
      .object({ unsettled: z.number().int().min(1).default(3), settled: z.number().int().min(1).default(5) })
      .default({ unsettled: 3, settled: 5 }),
    /** where generated media is kept */
    media: mediaConfig.default({ store: 'file' }),
    /** generated media is deleted this many days after it was made (checked hourly and at startup); 0 keeps it forever */
    mediaRetentionDays: z.number().nonnegative().default(30),
    /**
     * ledger rows in a final state (settled, failed, released), and payment identifiers, are deleted this many days after their last change
     * (checked hourly and at startup, in every instance); rows still in flight never are. 0 keeps them forever.
     */
    ledgerRetentionDays: z.number().int().nonnegative().default(90),
    /**
     * name of the environment variable (or NAME_FILE) holding the bearer token of the operator API
     * (/api/v1/admin/*). Unset or empty: that API answers 403 admin_disabled.
     */
    adminTokenEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .default('ADMIN_TOKEN'),
    /**
     * name of the environment variable (or NAME_FILE) holding the bearer token that GET /metrics then requires.
     * Unset or empty: /metrics is open (keep it off the public network).
     */
    metricsTokenEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .default('METRICS_TOKEN'),
    /**
     * How catalogues name and file this service: x402 v2 `resource.serviceName` and `tags` (bazaar rules: printable
     * ASCII, a name of at most 32 characters, at most 5 tags of at most 32), the description of /.well-known/x402 and
     * /llms.txt. Kept short: it travels in every PAYMENT-REQUIRED header.
     */
    service: z
      .object({
        name: printableAscii.default(DEFAULT_SERVICE.name),
        description: z
          .string()
          .regex(/^[^\p{Cc}]{1,300}$/u, '1 to 300 characters, no control characters')
          .default(DEFAULT_SERVICE.description),
        tags: z.array(printableAscii).max(5).default(DEFAULT_SERVICE.tags),
      })
      .strict()
      .default(DEFAULT_SERVICE),
    providers: z.record(z.string(), upstreamProvider).default({}),
    models: z.array(modelConfig).optional(),
    defaults: z
      .object({ chat: z.string(), image: z.string(), speech: z.string() })
      .partial()
      .default({}),
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
export type ParsedConfig = z.output<typeof configSchema>;
