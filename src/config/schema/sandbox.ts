// Sandbox mode: local chains with test USDC, started in-process, and where their JSON-RPC listens.
import { isIP } from 'node:net';
import { z } from 'zod';
import { NETWORK_NAMES } from '../../x402/networks.ts';
import { networkName } from './networks.ts';

/** Every network runs in the sandbox: anvil for EVM networks, litesvm for Solana. */
export const SANDBOX_NETWORK_NAMES = NETWORK_NAMES;

/** an IP address (IPv6 with or without brackets) or a DNS host name; no scheme, port or path */
const hostName = z.string().refine(
  (text) => isIP(text.replace(/^\[(.*)\]$/, '$1')) !== 0 || /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/.test(text),
  { error: (issue) => `${JSON.stringify(issue.input)} is not an IP address or host name (no scheme, port or path: e.g. 0.0.0.0, localhost)` },
);

export const sandboxFields = {
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
};
