// Where the HTTP server listens, the address clients reach it at, and what it accepts.
import { z } from 'zod';
import { isProxyEntry } from '../../lib/proxy-entry.ts';

export const serverFields = {
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(4021),
  /**
   * the origin clients reach us at (behind a proxy), e.g. https://ai.example.com; else derived from the request.
   * An origin only: the routes live at its root, and sign-in-with-x challenges name it (no path, query, fragment
   * or credentials)
   */
  publicUrl: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL, e.g. https://ai.example.com', abort: true })
    .refine(isOrigin, 'an origin only (scheme, host and port): no path, query, fragment or credentials; the routes live at its root')
    .optional(),
  /**
   * addresses (or CIDR ranges, e.g. "10.0.0.0/8") of the reverse proxies in front: only a request whose
   * connection comes from one of them has its X-Forwarded-Proto/Host believed. Default none: URLs come from
   * publicUrl, else the address the connection was accepted on.
   */
  trustedProxies: z
    .array(z.string().refine(isProxyEntry, { error: (issue) => `${String(issue.input)} is not an IP address or CIDR range` }))
    .default([]),
  bodyLimitBytes: z.number().int().positive().default(256 * 1024),
  /**
   * the largest request body on the agent chat surfaces (/v1/chat/completions, /v1/responses, /v1/messages and
   * its count_tokens): a coding agent sends its whole session every turn. 32 MiB by default, Anthropic's own limit.
   */
  chatBodyLimitBytes: z.number().int().positive().default(32 * 1024 * 1024),
  /**
   * the most request-body bytes held at once, across all requests (http/body-budget.ts): past it, a request with a
   * large body is answered 503 with Retry-After before its body is read. 256 MiB by default: eight bodies of the
   * largest size. At least the largest of the two limits above.
   */
  bodyMemoryLimitBytes: z.number().int().positive().default(256 * 1024 * 1024),
};

/** https://host[:port] with at most a trailing slash */
function isOrigin(text: string): boolean {
  const url = new URL(text);
  return url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '' && !/[?#]/.test(text);
}
