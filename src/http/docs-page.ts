// A human-readable page generated from the OpenAPI document: no scripts, no CDN, works offline.
import { html, raw } from 'hono/html';

interface Operation {
  summary?: string;
  description?: string;
}

export function docsPage(openapi: Record<string, unknown>): string {
  const info = openapi.info as { title: string; version: string; description: string };
  const paths = openapi.paths as Record<string, Record<string, Operation>>;
  const rows = Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(
      ([method, op]) => html`<tr><td><code>${method.toUpperCase()}</code></td><td><code>${path}</code></td><td>${op.summary ?? ''}<br><small>${op.description ?? ''}</small></td></tr>`,
    ),
  );
  return String(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${info.title}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td{padding:.4rem;vertical-align:top;border-top:1px solid #ddd}code{background:#f4f4f4;padding:0 .2rem}</style></head>
<body><h1>${info.title} <small>v${info.version}</small></h1><p>${info.description}</p>
<h2>How to pay</h2><ol><li>POST your request with <code>X-Network</code> (e.g. <code>base</code> or <code>solana</code>) and no <code>X-PAYMENT</code>: the 402 answer lists the exact price.</li>
<li>Sign the payment with any x402 client (<code>x402-fetch</code>, <code>@x402/fetch</code>) and repeat the same request with <code>X-PAYMENT</code>.</li>
<li>The 200 answer carries your result and <code>X-PAYMENT-RESPONSE</code>, the settlement receipt. A 409 <code>settlement_pending</code> means: retry with the same proof, never pay again.</li></ol>
<h2>Endpoints</h2><table>${raw(rows.join(''))}</table>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> · models and prices: <a href="/api/v1/ai/models">/api/v1/ai/models</a></p>
</body></html>`);
}
