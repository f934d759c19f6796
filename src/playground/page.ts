// The /playground page: a throwaway wallet, three forms (chat, images, speech), the quote, the result and
// the receipt. The markup is static; browser/app.ts fills it in. Every value shown later is set as text.
import { html, raw } from 'hono/html';

export interface PlaygroundNetwork {
  /** v1 name, sent as X-Network */
  name: string;
  /** CAIP-2 id, what an x402 v2 requirement names */
  caip2: string;
}

const quoteAndPay = (capability: string) => html`
<div class="actions"><button type="submit" class="quote-button">Get price</button>
<button type="button" class="pay-button" disabled>Pay and run</button></div>
<p class="quote" data-for="${capability}" aria-live="polite"></p>
<div class="outcome" hidden><h3>Result</h3><div class="result"></div>
<h3>Receipt</h3><dl class="receipt"></dl></div>`;

export function playgroundPage(networks: readonly PlaygroundNetwork[]): string {
  // JSON in a non-executed script element: read by the app, never run (the page's CSP allows no inline script)
  const config = JSON.stringify({ networks }).replace(/</g, '\\u003c');
  return String(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Playground: x402 AI gateway</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/playground/assets/playground.css">
<script type="application/json" id="playground-config">${raw(config)}</script>
<script type="module" src="/playground/assets/app.js"></script></head>
<body>
<header class="top"><div class="inner"><h1>x402 AI gateway <span class="tag">Playground</span></h1>
<nav><a href="/docs">API docs</a><a href="/api/v1/ai/models">Models and prices</a></nav></div></header>
<main class="inner">
<p class="sandbox-note"><strong>Sandbox mode.</strong> Payments here move test USDC on this gateway's local chains: nothing is real money.
Each call is paid from a throwaway wallet in your browser with the official x402 client (<code>@x402/fetch</code>, <code>@x402/evm</code>).</p>

<section class="card wallet" aria-labelledby="wallet-title"><h2 id="wallet-title">Your test wallet</h2>
<div class="wallet-grid">
<label>Network <select id="network"></select></label>
<div><span class="label">Address</span><code id="wallet-address">…</code></div>
<div><span class="label">Balance</span><strong id="wallet-balance">…</strong></div>
</div>
<div class="actions"><button type="button" id="fund-button">Fund with 100 test USDC</button>
<button type="button" id="new-wallet-button" class="secondary">New wallet</button></div>
<p class="hint">A key generated in this page and kept in this tab's session storage only; it pays on EVM networks (Base and the
other EVM sandbox chains). Solana is not offered in the browser playground.</p>
<p id="wallet-status" class="status" aria-live="polite"></p></section>

<nav class="tabs" role="tablist">
<button type="button" role="tab" data-tab="chat" aria-selected="true">Chat</button>
<button type="button" role="tab" data-tab="image" aria-selected="false">Images</button>
<button type="button" role="tab" data-tab="speech" aria-selected="false">Speech</button></nav>

<form class="card paid" id="chat-form" data-capability="chat" data-path="/api/v1/ai/chat">
<label>Model <select name="model"></select></label><p class="price-list"></p>
<label>Prompt <textarea name="prompt" rows="3" required>Tell me about lighthouses.</textarea></label>
<label>Max tokens <input name="max_tokens" type="number" min="1" step="1" placeholder="model default"></label>
${quoteAndPay('chat')}</form>

<form class="card paid" id="image-form" data-capability="image" data-path="/api/v1/ai/images" hidden>
<label>Model <select name="model"></select></label><p class="price-list"></p>
<label>Prompt <textarea name="prompt" rows="2" required>a lighthouse at dusk</textarea></label>
<div class="row"><label>Size <select name="size"></select></label>
<label>Images <input name="n" type="number" min="1" step="1" value="1" required></label></div>
${quoteAndPay('image')}</form>

<form class="card paid" id="speech-form" data-capability="speech" data-path="/api/v1/ai/tts" hidden>
<label>Model <select name="model"></select></label><p class="price-list"></p>
<label>Text <textarea name="text" rows="3" required>Good morning! This sentence was paid for with test USDC.</textarea></label>
<div class="row"><label>Voice <select name="voice"></select></label>
<label>Format <select name="format"></select></label></div>
${quoteAndPay('speech')}</form>
</main></body></html>`);
}
