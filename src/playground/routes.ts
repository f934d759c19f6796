// /playground and its assets, mounted in sandbox mode only (service.ts): a live gateway has no playground.
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { staticAsset } from '../http/discovery/static-asset.ts';
import { playgroundPage, type PlaygroundNetwork } from './page.ts';
import { bundlePlaygroundScript } from './bundle.ts';

/** Only this origin; media (images, audio) come from this gateway's /media route. */
const PLAYGROUND_CSP =
  "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; style-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export function playgroundRoutes(networks: readonly PlaygroundNetwork[]): Hono {
  const page = playgroundPage(networks);
  const script = staticAsset('text/javascript; charset=utf-8', bundlePlaygroundScript);
  const style = staticAsset('text/css; charset=utf-8', fileURLToPath(new URL('./playground.css', import.meta.url)));
  const app = new Hono();
  app.get('/playground', (c) => c.html(page, 200, { 'Content-Security-Policy': PLAYGROUND_CSP, 'Cache-Control': 'no-store' }));
  app.get('/playground/assets/app.js', (c) => script.respond(c));
  app.get('/playground/assets/playground.css', (c) => style.respond(c));
  return app;
}
