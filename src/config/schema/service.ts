// How catalogues name and file this service.
import { z } from 'zod';

/** 1 to 32 printable ASCII characters (x402 bazaar's rule for a service name or a tag) */
const printableAscii = z.string().regex(/^[\x20-\x7E]{1,32}$/, '1 to 32 printable ASCII characters');
const DEFAULT_SERVICE = {
  name: 'x402 AI gateway',
  description: 'Chat completions, image generation and text-to-speech, paid per request in USDC through x402.',
  tags: ['ai', 'chat', 'image-generation', 'text-to-speech'],
};

export const serviceFields = {
  /**
   * x402 v2 `resource.serviceName` and `tags` (bazaar rules: printable ASCII, a name of at most 32 characters, at
   * most 5 tags of at most 32), the description of /.well-known/x402 and /llms.txt. Kept short: it travels in
   * every PAYMENT-REQUIRED header.
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
};
