// The fetch our chain RPC clients use: node:http over a keep-alive pool (createNodeHttpFetch, the transport of
// the upstream AI calls), one pool for every RPC client in the process. A paid call makes a handful of RPC
// round trips; each skips a connect, and node:http costs less CPU per call than the global fetch (undici).
import { createNodeHttpFetch } from '../../lib/node-http-fetch.ts';

export const rpcFetch: typeof fetch = createNodeHttpFetch();
