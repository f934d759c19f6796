// Agent frameworks as their users write them, defaults untouched, paying through their own fetch hook: the OpenAI
// Agents SDK (Responses and Chat Completions, run whole and streamed), the AI SDK's Anthropic provider (streamText
// with tools: every tool eager_input_streaming, max_tokens 4096) and a LangChain tool loop (ToolMessage with its
// name). On the upstreams that play a coding agent's model each runs the whole loop: it reads the file with its
// tool, and its answer quotes it. The embedded sandbox model cannot follow a loop (it writes fluent nonsense), so
// there each makes the forced call its loop starts with, and takes it as far as its tool.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { createAnthropic } from '@ai-sdk/anthropic';
import { jsonSchema, stepCountIs, streamText, tool as aiTool } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { tool as langchainTool } from '@langchain/core/tools';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { CompatCase } from './case.ts';
import { SECRET, type Buyer, type CompatGateway, type ModelKind } from './gateway.ts';

/** the version this repository pins */
const pinned = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as Record<'dependencies' | 'devDependencies', Record<string, string>>;
const versionOf = (name: string) => pinned.devDependencies[name] ?? pinned.dependencies[name];

// the Agents SDK would export its traces to OpenAI
setTracingDisabled(true);

const UPSTREAMS: ModelKind[] = ['openai', 'anthropic'];
const prompt = (gateway: CompatGateway) => `Read ${gateway.file} and tell me the secret word.`;
/** the agent's Read tool: the project's file (the sandbox model names any path; the upstreams name this one) */
const reader = (gateway: CompatGateway) => () => readFileSync(gateway.file, 'utf8');

function openaiClient(gateway: CompatGateway, buyer: Buyer): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', fetch: buyer.fetch, maxRetries: 0, defaultHeaders: { 'X-Network': 'base' } });
}

const agentsSdk = `OpenAI Agents SDK ${versionOf('@openai/agents')}`;

function agentsCases(): CompatCase[] {
  const cases: CompatCase[] = [];
  for (const [surface, useResponses] of [['/v1/responses', true], ['/v1/chat/completions', false]] as const) {
    for (const stream of [false, true]) {
      const how = stream ? 'streamed' : 'whole';
      const run = async (gateway: CompatGateway, model: ModelKind) => {
        const buyer = await gateway.buyer();
        const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: openaiClient(gateway, buyer), useResponses }), tracingDisabled: true });
        const read = agentTool({ name: 'Read', description: 'Reads a file', parameters: z.object({ file_path: z.string() }), execute: reader(gateway) });
        const loop = model !== 'sandbox';
        const agent = new Agent({
          name: 'reader',
          instructions: 'Read the files you are asked about.',
          model: gateway.models[model],
          tools: [read],
          // the sandbox model: its forced call of the tool, whose output ends the run
          ...(loop ? {} : { modelSettings: { toolChoice: 'Read', maxTokens: 64 }, toolUseBehavior: 'stop_on_first_tool' as const }),
        });
        const result = stream ? await runner.run(agent, prompt(gateway), { stream: true, maxTurns: 4 }) : await runner.run(agent, prompt(gateway), { maxTurns: 4 });
        if (stream) {
          const streamed = result as Awaited<ReturnType<typeof runner.run<typeof agent>>> & { completed: Promise<void>; toTextStream(): AsyncIterable<string> };
          for await (const piece of streamed.toTextStream()) void piece;
          await streamed.completed;
        }
        const output = String(result.finalOutput);
        assert.match(output, /PELICAN/, loop ? 'the answer quotes the file' : 'the tool read the file');
        await buyer.assertCharged(loop ? 2 : 1);
      };
      for (const model of UPSTREAMS) cases.push({ client: agentsSdk, surface, feature: `tool loop, ${how}`, model, run: (gateway) => run(gateway, model) });
      cases.push({ client: agentsSdk, surface, feature: `forced tool call run by the agent, ${how}`, model: 'sandbox', run: (gateway) => run(gateway, 'sandbox') });
    }
  }
  return cases;
}

const aiSdkAnthropic = `AI SDK @ai-sdk/anthropic ${versionOf('@ai-sdk/anthropic')}`;

function aiSdkCases(): CompatCase[] {
  const run = async (gateway: CompatGateway, model: ModelKind) => {
    const buyer = await gateway.buyer();
    const anthropic = createAnthropic({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', fetch: buyer.fetch, headers: { 'X-Network': 'base' } });
    const Read = aiTool({
      description: 'Reads a file',
      inputSchema: jsonSchema<{ file_path: string }>({ type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'], additionalProperties: false }),
      execute: reader(gateway),
    });
    const loop = model !== 'sandbox';
    const result = streamText({
      model: anthropic(gateway.models[model]),
      prompt: prompt(gateway),
      tools: { Read },
      ...(loop ? { stopWhen: stepCountIs(3) } : { toolChoice: { type: 'tool', toolName: 'Read' } as const }),
    });
    for await (const piece of result.fullStream) if (piece.type === 'error') throw piece.error;
    const steps = await result.steps;
    assert.equal(steps[0]!.toolCalls[0]?.toolName, 'Read');
    if (loop) assert.match(await result.text, /PELICAN/);
    else assert.equal(String(steps[0]!.toolResults[0]?.output), `${SECRET}\n`);
    await buyer.assertCharged(loop ? 2 : 1);
  };
  return [
    ...UPSTREAMS.map((model): CompatCase => ({ client: aiSdkAnthropic, surface: '/v1/messages', feature: 'streamText tool loop, provider defaults', model, run: (gateway) => run(gateway, model) })),
    { client: aiSdkAnthropic, surface: '/v1/messages', feature: 'streamText forced tool call, provider defaults', model: 'sandbox', run: (gateway) => run(gateway, 'sandbox') },
  ];
}

const langchain = `LangChain @langchain/openai ${versionOf('@langchain/openai')}`;

function langchainCases(): CompatCase[] {
  const run = async (gateway: CompatGateway, model: ModelKind) => {
    const buyer = await gateway.buyer();
    const chat = new ChatOpenAI({
      model: gateway.models[model],
      apiKey: 'unused',
      maxRetries: 0,
      maxTokens: 256,
      configuration: { baseURL: `${gateway.url}/v1`, fetch: buyer.fetch, defaultHeaders: { 'X-Network': 'base' } },
    });
    const read = langchainTool(reader(gateway), { name: 'Read', description: 'Reads a file', schema: z.object({ file_path: z.string() }) });
    const messages: BaseMessage[] = [new HumanMessage(prompt(gateway))];
    const reply = await chat.bindTools([read], model === 'sandbox' ? { tool_choice: 'Read' } : {}).invoke(messages);
    assert.equal(reply.tool_calls?.[0]?.name, 'Read');
    messages.push(reply);
    // the ToolMessage LangChain makes carries the tool's name
    for (const call of reply.tool_calls ?? []) messages.push(await read.invoke(call));
    const answer = await chat.bindTools([read]).invoke(messages);
    if (model !== 'sandbox') assert.match(String(answer.content), /PELICAN/);
    await buyer.assertCharged(2);
  };
  return (['openai', 'anthropic', 'sandbox'] as const).map((model) => ({
    client: langchain,
    surface: '/v1/chat/completions',
    feature: 'tool loop (bindTools, the ToolMessage back)',
    model,
    run: (gateway: CompatGateway) => run(gateway, model),
  }));
}

export const frameworkCases: CompatCase[] = [...agentsCases(), ...aiSdkCases(), ...langchainCases()];
