// GET /docs: /openapi.json rendered by Swagger UI, served from our own install (the swagger-ui-dist
// package, no CDN), under a short header on how to pay. Each paid operation's description lists its
// prices in USDC (openapi-prices.ts).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { staticAsset } from './static-asset.ts';

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ownAsset = (name: string) => fileURLToPath(new URL(`./docs-assets/${name}`, import.meta.url));

const ASSETS = {
  'swagger-ui-bundle.js': staticAsset('text/javascript; charset=utf-8', join(swaggerUiDir, 'swagger-ui-bundle.js')),
  'swagger-ui.css': staticAsset('text/css; charset=utf-8', join(swaggerUiDir, 'swagger-ui.css')),
  'docs.js': staticAsset('text/javascript; charset=utf-8', ownAsset('docs.js')),
  'docs.css': staticAsset('text/css; charset=utf-8', ownAsset('docs.css')),
} as const;

/** Only this origin: Swagger UI sets inline styles and draws icons from data: URLs. */
export const PAGE_CSP = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

function docsPage(info: { title: string; description: string }, playground: boolean): string {
  return String(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${info.title}: API documentation</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"><link rel="stylesheet" href="/docs/assets/docs.css">
<script src="/docs/assets/swagger-ui-bundle.js" defer></script><script src="/docs/assets/docs.js" defer></script></head>
<body><header class="gateway-header"><div class="inner"><h1>${info.title}</h1><p>${info.description}</p>
<nav>${playground ? html`<a href="/playground">Playground (sandbox: try it with test USDC)</a>` : ''}<a href="/api/v1/ai/models">Models and prices (JSON)</a><a href="/openapi.json">openapi.json</a></nav></div></header>
<section class="how-to-pay"><details open><summary>How to pay</summary><ol>
<li>POST your request with <code>X-Network</code> (e.g. <code>base</code> or <code>solana</code>) and no payment: the 402 answer lists the exact price, in USDC atomic units (1 USDC = 1,000,000), in its body (x402 version 1) and in the <code>PAYMENT-REQUIRED</code> header (version 2).</li>
<li>Sign the payment with any x402 client and repeat the same request with the proof: <code>PAYMENT-SIGNATURE</code> (version 2, <code>@x402/fetch</code>) or <code>X-PAYMENT</code> (version 1, <code>x402-fetch</code>). Schemes: <code>exact</code> pays the quoted price on every network; <code>upto</code> (EVM networks, Permit2) signs for the most a metered chat can cost and is charged what it used.</li>
<li>The 200 answer carries your result and the settlement receipt in <code>PAYMENT-RESPONSE</code> (v2) or <code>X-PAYMENT-RESPONSE</code> (v1). A 409 <code>settlement_pending</code> means: retry with the same proof, never pay again.</li></ol></details></section>
<main id="swagger-ui"><noscript>This page renders <a href="/openapi.json">/openapi.json</a> with JavaScript.</noscript></main>
</body></html>`);
}

export function docsRoutes(openapi: Record<string, unknown>, options: { playground: boolean }): Hono {
  const page = docsPage(openapi.info as { title: string; description: string }, options.playground);
  const app = new Hono();
  app.get('/docs', (c) => c.html(page, 200, { 'Content-Security-Policy': PAGE_CSP }));
  for (const [name, asset] of Object.entries(ASSETS)) app.get(`/docs/assets/${name}`, (c) => asset.respond(c));
  return app;
}
