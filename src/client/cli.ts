#!/usr/bin/env node
// x402-ai: pay for chat, images and speech from the command line.
// Keys come from the environment (X402_EVM_PRIVATE_KEY, X402_SOLANA_SECRET_KEY) or a key file (--key-file),
// never from arguments.
import { join } from 'node:path';
import { createClient, type ClientOptions, type PaymentStep, type Receipt } from './create-client.ts';
import { gatewayUrl, parseCommandLine, runCommand, UsageError } from './command-line.ts';
import { GatewayError, MaxPriceExceededError } from './errors.ts';
import { formatUsdc, parseUsdc } from './usdc.ts';
import { transactionLink } from './explorer.ts';
import { buyerKey as readBuyerKey, KEY_ENV, keyText } from './buyer-key.ts';
import { isSolanaNetwork } from './solana-rpc.ts';
import { gatewayHealth } from './health.ts';
import { explainingFetch } from './reach.ts';
import { progressOn } from './progress.ts';
import { makeFolder, mediaFileName, prepareOutputFile, saveWithoutOverwriting, speechFormat } from './output-file.ts';
import { NETWORK_NAMES, NETWORKS, type NetworkName } from '../x402/networks.ts';
import { addressOfKey, newWallet, saveKeyFile } from './wallet.ts';
import { balanceRpcUrl, readBalances } from './balance.ts';
import { formatUnits } from 'viem';
import { PROXY_OPTIONS, PROXY_USAGE, payToOption } from './proxy/options.ts';
import { firstChatModel, readModels, type ListedModel } from './catalog.ts';

const USAGE = `usage: x402-ai <command> [options]
  wallet new        [--network n] [--out file]  a new buyer key for the network's chain (EVM or Solana): printed,
                    or saved to --out (readable by you only; an existing file is never overwritten)
  faucet [address]  [--amount USDC]  sandbox gateways only: test USDC and gas for the address (default: the key's)
  balance [address] [--rpc-url url]  USDC and gas coin held on --network (default: the key's address), read from
                    --rpc-url, else the sandbox chain the gateway reports, else the network's public RPC
  chat "prompt"     [--model id] [--max-tokens n] [--temperature t]  (default model: the gateway's first chat model)
  image "prompt"    [--model id] [--n 2] [--size 512x512] [--out dir/]
  tts "text"        [--model id] [--voice v] [--format wav|mp3|ogg] [--out file.wav]  (the extension picks the
                    format when --format is not given; an existing file is never overwritten)
  models            list models, limits and prices
  receipt <tx>      show a payment by transaction hash; with the payer's key at hand, its result too
${PROXY_USAGE}
options: --url (X402_AI_URL, default http://127.0.0.1:4021)  --max-price USDC (default 0.10)  --key-file path  --json
         --pay-to address  chat, image, tts and proxy pay only this payee (an offer to another is never signed)
         --network (X402_AI_NETWORK, default base): ${NETWORK_NAMES.join(', ')}
         --rpc-url (X402_SOLANA_RPC_URL) Solana payments and balance; for proxy and mcp, the chain read on any
                   network; default: the sandbox RPC a sandbox gateway reports, else public
         --version
keys:    EVM: X402_EVM_PRIVATE_KEY=0x… in the environment, or --key-file holding the 0x hex key
         Solana: X402_SOLANA_SECRET_KEY (base58 or solana-keygen JSON array), or --key-file holding either
         (e.g. --key-file ~/.config/solana/id.json); keys are never taken from arguments`;

const { values, positionals } = parseCommandLine('x402-ai', {
  url: { type: 'string' },
  network: { type: 'string' },
  'max-price': { type: 'string' },
  'key-file': { type: 'string' },
  'rpc-url': { type: 'string' },
  json: { type: 'boolean', default: false },
  model: { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  n: { type: 'string' },
  size: { type: 'string' },
  voice: { type: 'string' },
  format: { type: 'string' },
  out: { type: 'string' },
  amount: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...PROXY_OPTIONS,
});

const network = values.network ?? process.env.X402_AI_NETWORK ?? 'base';
const solana = isSolanaNetwork(network);
const rpcUrl = values['rpc-url'] ?? process.env.X402_SOLANA_RPC_URL;
const doFetch = explainingFetch(fetch);
/** the spinner on stderr (a terminal only) */
const progress = progressOn(process.stderr);

const STEPS: Record<PaymentStep, string> = {
  quoting: 'asking for the price',
  signing: 'signing the payment',
  working: 'generating (the payment settles once the result exists)',
  'settlement-pending': 'settlement pending: asking again with the same payment',
};

/** The buyer's key for the network paid on, as createClient takes it. */
function buyerKey(): Pick<ClientOptions, 'evmPrivateKey' | 'solanaSecretKey' | 'solanaRpcUrl'> {
  if (!solana && values['rpc-url']) throw new UsageError('--rpc-url applies to Solana networks only');
  const key = readBuyerKey(solana ? 'svm' : 'evm', values['key-file']);
  return 'solanaSecretKey' in key ? { ...key, solanaRpcUrl: rpcUrl } : key;
}

/** The address of the buyer's key for --network (from the environment or --key-file). */
async function keyAddress(): Promise<string> {
  const family = NETWORKS[network as NetworkName].family;
  return addressOfKey(family, keyText(KEY_ENV[family], values['key-file']));
}

/** A USDC amount option (decimal, e.g. 25 or 0.5) in atomic units. */
function usdcAmount(name: string, text: string): bigint {
  try {
    return parseUsdc(text);
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
}

/** Every buyer key on hand, none required: a receipt's public facts need no key, its result needs the payer's. */
function ownedKeys(): Pick<ClientOptions, 'evmPrivateKey' | 'solanaSecretKey'> {
  const evm = process.env.X402_EVM_PRIVATE_KEY;
  const sol = process.env.X402_SOLANA_SECRET_KEY;
  const fromEnv = { ...(evm ? { evmPrivateKey: evm as `0x${string}` } : {}), ...(sol ? { solanaSecretKey: sol } : {}) };
  return values['key-file'] ? { ...fromEnv, ...buyerKey() } : fromEnv;
}

function integer(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be a whole number`);
  return Number(text);
}

function maxPrice(): bigint {
  try {
    return parseUsdc(values['max-price'] ?? '0.10');
  } catch (error) {
    throw new UsageError(`--max-price: ${(error as Error).message}`);
  }
}

/** Everything about how the call is paid, checked before any request: a mistake here never costs anything. */
function payingClient(baseUrl: string) {
  const cap = maxPrice();
  const payTo = payToOption(values);
  return createClient({ baseUrl, network, ...buyerKey(), maxPrice: cap, ...(payTo ? { payTo } : {}), onProgress: (step) => progress.step(STEPS[step]) });
}

/** The price and the transaction; an explorer link only where a public explorer can see it (not a sandbox chain). */
async function paidLine(baseUrl: string, receipt: Receipt): Promise<string> {
  const line = `paid ${formatUsdc(receipt.amount)} USDC on ${receipt.network}, tx ${receipt.transaction}`;
  const health = await gatewayHealth(baseUrl, doFetch);
  if (health.sandbox) {
    const rpc = health.sandboxRpcUrls[receipt.network];
    return `${line}\n(sandbox chain: no public explorer shows it${rpc ? `; its JSON-RPC is ${rpc}` : ''})`;
  }
  const link = transactionLink(receipt.network, receipt.transaction);
  return link ? `${line}\n${link}` : line;
}

/** A receipt as --json shows it: the amount in atomic units and in USDC. */
const receiptJson = (receipt: Receipt) => ({ ...receipt, amountUsdc: formatUsdc(receipt.amount) });

/** Fetches a paid file and saves it without overwriting anything; a failure names the URL, which stays valid. */
async function download(url: string, path: string): Promise<string> {
  progress.step(`saving ${path}`);
  try {
    // the gateway names the URL: only a web address is fetched (never data:, file: and the like)
    if (!/^https?:$/.test(URL.canParse(url) ? new URL(url).protocol : '')) throw new Error('not an http(s) URL');
    const response = await doFetch(url);
    if (!response.ok) throw new Error(`the download answered ${response.status}`);
    return await saveWithoutOverwriting(path, new Uint8Array(await response.arrayBuffer()));
  } catch (error) {
    throw new Error(`paid, but ${path} could not be saved (${(error as Error).message}); the result stays at ${url}`, { cause: error });
  }
}

function output(json: unknown, human: string): void {
  progress.done();
  console.log(values.json ? JSON.stringify(json, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2) : human);
}

async function run(): Promise<void> {
  const [command, text] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  const baseUrl = gatewayUrl(values.gateway ?? values.url);
  const needText = (what: string) => {
    if (!text) throw new UsageError(`${command} needs the ${what} as its argument`);
    return text;
  };
  const onNetwork = ['chat', 'image', 'tts', 'wallet', 'faucet', 'balance', 'proxy', 'mcp'].includes(command);
  if (onNetwork && !(NETWORK_NAMES as readonly string[]).includes(network)) {
    throw new UsageError(`unknown network "${network}": use one of ${NETWORK_NAMES.join(', ')}`);
  }
  switch (command) {
    case 'wallet': {
      if (text !== 'new') throw new UsageError(text ? `unknown wallet command "${text}": use wallet new` : 'wallet needs a command: wallet new');
      const wallet = newWallet(NETWORKS[network as NetworkName].family);
      const envName = wallet.family === 'evm' ? 'X402_EVM_PRIVATE_KEY' : 'X402_SOLANA_SECRET_KEY';
      const kind = wallet.family === 'evm' ? 'EVM' : 'Solana';
      if (values.out !== undefined) {
        await saveKeyFile(values.out, wallet.secretKey);
        output(
          { network, family: wallet.family, address: wallet.address, keyFile: values.out },
          `new ${kind} key saved to ${values.out} (readable by you only)\naddress ${wallet.address}\npay with it: --key-file ${values.out}`,
        );
        return;
      }
      output(
        { network, family: wallet.family, address: wallet.address, secretKey: wallet.secretKey },
        `new ${kind} key (keep it secret: whoever holds it spends what the address holds)\naddress     ${wallet.address}\nsecret key  ${wallet.secretKey}\npay with it: export ${envName}=<the secret key>, or save it with --out file and pass --key-file file`,
      );
      return;
    }
    case 'faucet': {
      const address = text ?? (await keyAddress());
      const health = await gatewayHealth(baseUrl, doFetch);
      if (!health.sandbox) {
        throw new Error(`the gateway at ${baseUrl} is live (real USDC): it has no faucet; fund ${address} with USDC on ${network} yourself`);
      }
      const amount = values.amount === undefined ? undefined : usdcAmount('amount', values.amount);
      progress.step(`asking the faucet for test USDC on ${network}`);
      const response = await doFetch(`${baseUrl}/sandbox/faucet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network, address, ...(amount === undefined ? {} : { amount: amount.toString() }) }),
      });
      const body = (await response.json().catch(() => undefined)) as { balance?: string; error?: string } | undefined;
      if (!response.ok) throw new GatewayError(response.status, body);
      output(body, `funded ${address} on ${network} (sandbox): it holds ${formatUsdc(BigInt(body?.balance ?? '0'))} test USDC`);
      return;
    }
    case 'balance': {
      const address = text ?? (await keyAddress());
      const rpc = await balanceRpcUrl(network as NetworkName, { rpcUrl: values['rpc-url'], baseUrl, fetch: doFetch });
      progress.step(`reading ${network} at ${rpc}`);
      const held = await readBalances(network as NetworkName, address, rpc).catch((error: unknown) => {
        throw new Error(`cannot read balances on ${network} at ${rpc}: ${(error as Error).message.split('\n')[0]}`, { cause: error });
      });
      output(
        { ...held, usdcAtomic: held.usdc, usdc: formatUsdc(held.usdc), native: formatUnits(held.native, held.nativeDecimals), nativeAtomic: held.native },
        `${address} on ${network}: ${formatUsdc(held.usdc)} USDC, ${formatUnits(held.native, held.nativeDecimals)} ${held.nativeSymbol}`,
      );
      return;
    }
    case 'chat': {
      const temperature = values.temperature === undefined ? undefined : Number(values.temperature);
      if (temperature !== undefined && Number.isNaN(temperature)) throw new UsageError('--temperature must be a number');
      const { result, receipt } = await payingClient(baseUrl).chat({
        model: values.model ?? (await defaultChatModel(baseUrl)),
        prompt: needText('prompt'),
        max_tokens: integer('max-tokens', values['max-tokens']),
        temperature,
      });
      output({ result, receipt: receiptJson(receipt) }, `${result.response}\n\n${result.usage.tokens} tokens · ${await paidLine(baseUrl, receipt)}`);
      return;
    }
    case 'image': {
      const request = { prompt: needText('prompt'), model: values.model, n: integer('n', values.n), size: values.size };
      const client = payingClient(baseUrl);
      const dir = values.out ?? '.';
      await makeFolder(dir);
      const { result, receipt } = await client.images(request);
      const files: string[] = [];
      for (const url of result.images) files.push(await download(url, join(dir, mediaFileName(url))));
      output({ result, receipt: receiptJson(receipt), files }, `${files.join('\n')}\n${await paidLine(baseUrl, receipt)}`);
      return;
    }
    case 'tts': {
      const request = { text: needText('text'), model: values.model, voice: values.voice, format: speechFormat(values.format, values.out) };
      const client = payingClient(baseUrl);
      if (values.out !== undefined) await prepareOutputFile(values.out);
      const { result, receipt } = await client.tts(request);
      const file = await download(result.audioUrl, values.out ?? mediaFileName(result.audioUrl));
      output({ result, receipt: receiptJson(receipt), file }, `${file}\n${await paidLine(baseUrl, receipt)}`);
      return;
    }
    case 'proxy':
    case 'mcp':
    case 'spend': {
      // loaded only for these commands: the official scheme clients and the MCP SDK
      const paying = await import('./proxy/command.ts');
      const context = { values, gateway: baseUrl, network };
      if (command === 'proxy') return paying.runProxy(context);
      if (command === 'mcp') return paying.runMcp(context);
      return paying.runSpend(context);
    }
    case 'models': {
      progress.step('reading the models');
      const listing = await readModels(baseUrl, doFetch);
      output(listing, listing.models.map((m) => `${m.capability.padEnd(7)} ${m.id.padEnd(22)} ${m.label}\n${' '.repeat(8)}${terms(m)}`).join('\n'));
      return;
    }
    case 'receipt': {
      progress.step('looking the payment up');
      const payment = await createClient({ baseUrl, network, ...ownedKeys(), maxPrice: 0n }).payment(needText('transaction hash'));
      const facts = `${payment.state}: ${formatUsdc(BigInt(payment.amount ?? '0'))} USDC on ${payment.network} from ${payment.payer}, tx ${payment.transaction}`;
      output({ ...payment, amountUsdc: formatUsdc(BigInt(payment.amount ?? '0')) }, payment.result === undefined ? facts : `${facts}\n${JSON.stringify(payment.result, null, 2)}`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** What `chat` asks for without --model: the first chat model of the gateway's own catalog. */
async function defaultChatModel(baseUrl: string): Promise<string> {
  progress.step('reading the models');
  const chat = firstChatModel((await readModels(baseUrl, doFetch)).models);
  if (!chat) throw new Error(`the gateway at ${baseUrl} lists no chat model (GET /api/v1/ai/models)`);
  return chat.id;
}

/** One line of a model's limits and prices, in USDC. */
function terms(m: ListedModel): string {
  const usdc = (atomic: unknown) => formatUsdc(BigInt(String(atomic ?? '0')));
  const p = m.price;
  const parts =
    m.capability === 'chat'
      ? [`max_tokens <= ${m.maxTokens} (default ${m.defaultMaxTokens})`, `price ${usdc(p.perRequest)} + ${usdc(p.perThousandOutputTokens)}/1k max_tokens + ${usdc(p.perThousandInputChars)}/1k input chars USDC`]
      : m.capability === 'image'
        ? [`n <= ${m.maxN}`, `price per image ${(m.sizes ?? []).map((size) => `${size} ${usdc((p.perImageBySize as Record<string, string>)[size])}`).join(', ')} USDC`]
        : [`voices ${(m.voices ?? []).join(' ')}`, `formats ${(m.formats ?? []).join(' ')}`, `text <= ${m.maxTextLength} chars`, `price ${usdc(p.perRequest)} + ${usdc(p.perThousandChars)}/1k chars USDC`];
  if (m.allowedOptions?.length) parts.push(`options ${m.allowedOptions.join(' ')}`);
  return parts.join('; ');
}

/**
 * A payment the address cannot cover (the chain's insufficient_funds, relayed by the gateway): the reason, then
 * how to see the balance and, on a sandbox gateway, to fund the address.
 */
async function explained(error: unknown): Promise<never> {
  if (!(error instanceof GatewayError) || !/insufficient_funds/.test(error.message)) throw error;
  const flags = [`--network ${network}`, values['key-file'] ? `--key-file ${values['key-file']}` : '', values.url ? `--url ${values.url}` : '']
    .filter(Boolean)
    .join(' ');
  const baseUrl = gatewayUrl(values.gateway ?? values.url);
  const sandbox = (await gatewayHealth(baseUrl, doFetch)).sandbox;
  const hint = [
    `the paying address holds less USDC on ${network} than the price: see what it holds with \`x402-ai balance ${flags}\``,
    sandbox ? `this gateway runs in sandbox mode: \`x402-ai faucet ${flags}\` adds 100 test USDC` : `send it USDC on ${network}`,
  ];
  throw new Error(`${error.message}\n${hint.join('\n')}`, { cause: error });
}

runCommand('x402-ai', () => run().catch(explained).finally(() => progress.done()), [[MaxPriceExceededError, 3]]);
