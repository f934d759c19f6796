// What a buyer reads from the gateway's GET /healthz: whether it runs in sandbox mode (its chains are local:
// no public explorer or cluster can see them) and, if so, each sandbox chain's JSON-RPC URL.

export interface GatewayHealth {
  sandbox: boolean;
  /** the sandbox chains' JSON-RPC URLs by network; empty for a live gateway */
  sandboxRpcUrls: Record<string, string>;
}

interface HealthBody {
  mode?: unknown;
  sandboxNetworks?: Record<string, { rpcUrl?: unknown } | undefined>;
}

/** The gateway's health report; a gateway that gives none (or an unreadable one) is taken as live. */
export async function gatewayHealth(baseUrl: string, doFetch: typeof fetch = fetch): Promise<GatewayHealth> {
  let body: HealthBody;
  try {
    const response = await doFetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return { sandbox: false, sandboxRpcUrls: {} };
    body = (await response.json()) as HealthBody;
  } catch {
    return { sandbox: false, sandboxRpcUrls: {} };
  }
  if (body.mode !== 'sandbox') return { sandbox: false, sandboxRpcUrls: {} };
  const urls: Record<string, string> = {};
  for (const [network, chain] of Object.entries(body.sandboxNetworks ?? {})) {
    if (typeof chain?.rpcUrl === 'string') urls[network] = chain.rpcUrl;
  }
  return { sandbox: true, sandboxRpcUrls: urls };
}
