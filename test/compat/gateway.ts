// The gateway every compatibility case runs against: sandbox mode on base, its embedded chat model, and two models
// served by local upstreams written for the tests, one speaking OpenAI's Chat Completions, one Anthropic's Messages
// API, each playing a coding agent's model (read FILE with the agent's tool, then answer from it:
// support/scripted-agent.ts). Buyers pay with the official @x402/fetch client, exact scheme; what each paid
// answer says it charged is kept, to be checked against the chain.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';
import { balanceOf, chargedPayingFetch, fundedEvmBuyer } from '../support/sandbox-wallet.ts';
import { startAgentGateway, UP_ANTHROPIC, UP_OPENAI } from '../support/agent-gateway.ts';
import { DEMO_CHAT_MODEL } from '../../src/config/engines.ts';
import type { RunningService } from '../../src/service.ts';

/** the kinds of model a client may be pointed at, as the matrix names them */
export const MODEL_KINDS = {
  sandbox: 'sandbox model (embedded)',
  openai: 'OpenAI-protocol upstream',
  anthropic: 'Anthropic-protocol upstream',
} as const;
export type ModelKind = keyof typeof MODEL_KINDS;

/** what the file the agents read says */
export const SECRET = 'The secret word is PELICAN.';

const FUNDS = 20_000_000n;

export interface Buyer {
  account: PrivateKeyAccount;
  /** a fetch that pays every 402, keeping each paid answer's X-Payment-Amount */
  fetch: typeof fetch;
  charged: bigint[];
  /** checks the chain moved exactly what the paid answers said, `calls` of them */
  assertCharged(calls?: number): Promise<void>;
}

export interface CompatGateway {
  service: RunningService;
  url: string;
  /** the model id of each kind */
  models: Record<ModelKind, string>;
  /** the file the scripted upstreams have agents read, holding SECRET */
  file: string;
  /** how many requests the upstream behind each kind of model has received so far */
  upstreamRequests(model: Exclude<ModelKind, 'sandbox'>): number;
  buyer(): Promise<Buyer>;
  stop(): Promise<void>;
}

export async function startCompatGateway(): Promise<CompatGateway> {
  const project = mkdtempSync(join(tmpdir(), 'compat-project-'));
  const file = join(project, 'notes.txt');
  writeFileSync(file, `${SECRET}\n`);
  const agents = await startAgentGateway({
    script: { file },
    model: { maxTokens: 8192, defaultMaxTokens: 1024, supports: { vision: true, reasoning: true }, cachedInputPercent: 10 },
  });
  const { service } = agents;
  return {
    service,
    url: service.url,
    models: { sandbox: DEMO_CHAT_MODEL.id, openai: UP_OPENAI, anthropic: UP_ANTHROPIC },
    file,
    upstreamRequests: (model) => (model === 'openai' ? agents.openaiUp : agents.anthropicUp).received.length,
    async buyer() {
      const account = await fundedEvmBuyer(service, ['base'], FUNDS);
      const { fetch, charged } = chargedPayingFetch(account);
      return {
        account,
        charged,
        fetch,
        async assertCharged(calls) {
          if (calls !== undefined) assert.equal(charged.length, calls, 'paid calls');
          assert.ok(charged.length > 0, 'at least one paid call');
          const spent = FUNDS - (await balanceOf(service, 'base', account.address));
          assert.equal(spent, charged.reduce((sum, amount) => sum + amount, 0n), 'each paid call charged once, on-chain');
        },
      };
    },
    async stop() {
      await agents.stop();
      rmSync(project, { recursive: true, force: true });
    },
  };
}
