// The playground in the browser: a throwaway EVM wallet, the price from the unpaid 402, the payment made by
// the official x402 client (@x402/fetch + @x402/evm), the result and the receipt. Bundled for the browser
// by esbuild when the gateway first serves it (../bundle.ts). Everything shown is set as text, never HTML.
import { wrapFetchWithPayment, x402Client, x402HTTPClient, type PaymentRequirements } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { formatUsdc } from '../../pricing/usdc.ts';
import { priceText, type PricedModel } from '../../pricing/price-text.ts';
import type { PlaygroundNetwork } from '../page.ts';

type Capability = 'chat' | 'image' | 'speech';
type ListedModel = PricedModel & {
  id: string;
  label: string;
  sizes?: string[];
  defaultSize?: string;
  maxN?: number;
  voices?: string[];
  defaultVoice?: string;
  formats?: string[];
  defaultFormat?: string;
  defaultMaxTokens?: number;
};
/** A v1 requirement names maxAmountRequired, a v2 one amount; the client hands either to its policies. */
type AnyRequirement = PaymentRequirements & { maxAmountRequired?: string };

const KEY_STORAGE = 'x402-playground-key';
const config = JSON.parse(document.getElementById('playground-config')!.textContent!) as { networks: PlaygroundNetwork[] };

const element = <T extends HTMLElement>(selector: string, root: ParentNode = document): T => {
  const found = root.querySelector<T>(selector);
  if (!found) throw new Error(`missing ${selector}`);
  return found;
};
const usdc = (atomic: bigint) => `${formatUsdc(atomic)} USDC`;
const amountOf = (requirement: AnyRequirement) => BigInt(requirement.amount ?? requirement.maxAmountRequired ?? '0');

async function errorText(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as { error?: unknown; code?: unknown } | undefined;
  const reason = typeof body?.error === 'string' ? body.error : response.statusText;
  // the chain's refusal, and what to do about it here (the playground runs in sandbox mode only)
  const hint = /insufficient_funds/.test(reason) ? '. The wallet holds less test USDC than the price: its balance is above; “Fund with 100 test USDC” adds more' : '';
  return `${response.status}${typeof body?.code === 'string' ? ` ${body.code}` : ''}: ${reason}${hint}`;
}

// ---- the wallet: one key per tab, in session storage ----

function storedKey(): `0x${string}` {
  const stored = sessionStorage.getItem(KEY_STORAGE);
  if (stored && /^0x[0-9a-fA-F]{64}$/.test(stored)) return stored as `0x${string}`;
  const key = generatePrivateKey();
  sessionStorage.setItem(KEY_STORAGE, key);
  return key;
}

let account = privateKeyToAccount(storedKey());
const networkSelect = element<HTMLSelectElement>('#network');
const walletStatus = element<HTMLElement>('#wallet-status');
const network = (): PlaygroundNetwork => config.networks.find((n) => n.name === networkSelect.value) ?? config.networks[0]!;

async function showBalance(): Promise<void> {
  const query = new URLSearchParams({ network: network().name, address: account.address });
  const response = await fetch(`/sandbox/balance?${query}`);
  if (!response.ok) throw new Error(await errorText(response));
  const { balance } = (await response.json()) as { balance: string };
  element('#wallet-balance').textContent = usdc(BigInt(balance));
}

function showWallet(): void {
  element('#wallet-address').textContent = account.address;
  showBalance().catch((error: unknown) => (walletStatus.textContent = `Balance unavailable: ${String(error)}`));
}

async function fund(): Promise<void> {
  const button = element<HTMLButtonElement>('#fund-button');
  button.disabled = true;
  walletStatus.textContent = 'Asking the sandbox faucet…';
  try {
    const response = await fetch('/sandbox/faucet', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ network: network().name, address: account.address }),
    });
    if (!response.ok) throw new Error(await errorText(response));
    const { balance } = (await response.json()) as { balance: string };
    element('#wallet-balance').textContent = usdc(BigInt(balance));
    walletStatus.textContent = `Funded on ${network().name}.`;
  } catch (error) {
    walletStatus.textContent = `Funding failed: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    button.disabled = false;
  }
}

// ---- the paid forms ----

let models: ListedModel[] = [];

function fillSelect(select: HTMLSelectElement, values: readonly string[] = [], chosen?: string): void {
  select.replaceChildren(...values.map((value) => new Option(value, value, false, value === chosen)));
}

/** The body a form sends: only what the person chose, so the gateway's defaults apply to the rest. */
function bodyOf(form: HTMLFormElement): Record<string, unknown> {
  const data = new FormData(form);
  const text = (name: string) => String(data.get(name) ?? '');
  switch (form.dataset.capability as Capability) {
    case 'chat': {
      const maxTokens = text('max_tokens').trim();
      return { model: text('model'), prompt: text('prompt'), ...(maxTokens ? { max_tokens: Number(maxTokens) } : {}) };
    }
    case 'image':
      return { model: text('model'), prompt: text('prompt'), size: text('size'), n: Number(text('n')) };
    case 'speech':
      return { model: text('model'), text: text('text'), voice: text('voice'), format: text('format') };
  }
}

function showModel(form: HTMLFormElement): void {
  const model = models.find((m) => m.id === element<HTMLSelectElement>('[name=model]', form).value);
  if (!model) return;
  element('.price-list', form).textContent = `${model.label ? `${model.label} ` : ''}Price: ${priceText(model)}.`;
  const select = (name: string) => form.querySelector<HTMLSelectElement>(`select[name=${name}]`);
  if (model.sizes) fillSelect(select('size')!, model.sizes, model.defaultSize);
  if (model.voices) fillSelect(select('voice')!, model.voices, model.defaultVoice);
  if (model.formats) fillSelect(select('format')!, model.formats, model.defaultFormat);
  if (model.maxN) element<HTMLInputElement>('[name=n]', form).max = String(model.maxN);
  if (model.defaultMaxTokens) element<HTMLInputElement>('[name=max_tokens]', form).placeholder = `model default (${model.defaultMaxTokens})`;
}

function showResult(form: HTMLFormElement, result: Record<string, unknown>): void {
  const target = element('.result', form);
  switch (form.dataset.capability as Capability) {
    case 'chat': {
      const answer = document.createElement('p');
      answer.className = 'chat-answer';
      answer.textContent = String(result.response);
      const usage = document.createElement('p');
      usage.className = 'hint';
      usage.textContent = `${String(result.model)} · ${String((result.usage as { tokens?: number } | undefined)?.tokens ?? '?')} tokens`;
      target.replaceChildren(answer, usage);
      return;
    }
    case 'image':
      target.replaceChildren(
        ...(result.images as string[]).map((url, index) => {
          const image = document.createElement('img');
          image.src = url;
          image.alt = `generated image ${index + 1}`;
          return image;
        }),
      );
      return;
    case 'speech': {
      const audio = document.createElement('audio');
      audio.controls = true;
      audio.preload = 'auto';
      audio.src = String(result.audioUrl);
      const link = document.createElement('a');
      link.href = String(result.audioUrl);
      link.textContent = 'Download the audio file';
      target.replaceChildren(audio, link);
    }
  }
}

/** Receipt rows from the payment route: what was settled, for how much, and where to look it up. */
async function showReceipt(form: HTMLFormElement, transaction: string, paid: bigint): Promise<void> {
  const receipt = element('.receipt', form);
  const row = (term: string, value: string | Node) => {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.append(value);
    return [dt, dd];
  };
  const route = `/api/v1/payments/${encodeURIComponent(transaction)}`;
  const link = document.createElement('a');
  link.href = route;
  link.target = '_blank';
  link.textContent = `GET ${route}`;
  const lookup = await fetch(route);
  const payment = lookup.ok ? ((await lookup.json()) as { state: string; amount: string; network: string; payer: string }) : undefined;
  const amount = payment ? BigInt(payment.amount) : paid;
  const hash = document.createElement('code');
  hash.textContent = transaction;
  receipt.replaceChildren(
    ...row('State', payment?.state ?? `unknown (${lookup.status})`),
    ...row('Amount', `${usdc(amount)} (${amount} atomic units)`),
    ...row('Network', payment?.network ?? network().name),
    ...row('Payer', payment?.payer ?? account.address),
    ...row('Transaction', hash),
    ...row('Payment', link),
  );
}

function wirePaidForm(form: HTMLFormElement): void {
  const quote = element('.quote', form);
  const payButton = element<HTMLButtonElement>('.pay-button', form);
  const quoteButton = element<HTMLButtonElement>('.quote-button', form);
  const outcome = element('.outcome', form);
  const path = form.dataset.path!;
  let quoted: { body: string; network: PlaygroundNetwork; amount: bigint } | undefined;

  const forget = () => {
    quoted = undefined;
    payButton.disabled = true;
    payButton.textContent = 'Pay and run';
  };
  const request = (body: string, chosen: PlaygroundNetwork): RequestInit => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Network': chosen.name },
    body,
  });
  const matches = (requirement: AnyRequirement, chosen: PlaygroundNetwork) =>
    requirement.network === chosen.name || requirement.network === chosen.caip2;

  // a changed form (or network) is another request: its old price, result and receipt no longer describe it
  const stale = () => {
    forget();
    quote.textContent = '';
    quote.className = 'quote';
    outcome.hidden = true;
    element('.result', form).replaceChildren();
    element('.receipt', form).replaceChildren();
  };
  form.addEventListener('input', stale);
  networkSelect.addEventListener('change', stale);
  element<HTMLSelectElement>('[name=model]', form).addEventListener('change', () => showModel(form));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    forget();
    const body = JSON.stringify(bodyOf(form));
    const chosen = network();
    quoteButton.disabled = true;
    quote.textContent = 'Asking for the price…';
    quote.className = 'quote';
    try {
      const response = await fetch(path, request(body, chosen));
      if (response.status !== 402) throw new Error(await errorText(response));
      const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse(
        (name) => response.headers.get(name),
        await response.json(),
      );
      const requirement = (required.accepts as AnyRequirement[]).find((r) => matches(r, chosen));
      if (!requirement) throw new Error(`the gateway offers no payment on ${chosen.name}`);
      quoted = { body, network: chosen, amount: amountOf(requirement) };
      quote.textContent = `Price: ${usdc(quoted.amount)} (${quoted.amount} atomic units) on ${chosen.name}, paid to ${requirement.payTo}.`;
      quote.classList.add('quoted');
      payButton.textContent = `Pay ${usdc(quoted.amount)} and run`;
      payButton.disabled = false;
    } catch (error) {
      quote.textContent = `No price: ${error instanceof Error ? error.message : String(error)}`;
      quote.classList.add('error');
    } finally {
      quoteButton.disabled = false;
    }
  });

  payButton.addEventListener('click', async () => {
    if (!quoted) return;
    const { body, network: chosen, amount } = quoted;
    payButton.disabled = true;
    quoteButton.disabled = true;
    quote.textContent = `Signing ${usdc(amount)} and waiting for the result…`;
    quote.className = 'quote';
    try {
      // The official client pays; our policy lets it sign only the network and the price the person saw.
      const client = x402Client.fromConfig({
        schemes: [],
        spendControls: false,
        policies: [(_version, requirements) => (requirements as AnyRequirement[]).filter((r) => matches(r, chosen) && amountOf(r) <= amount)],
      });
      registerExactEvmScheme(client, { signer: account });
      const response = await wrapFetchWithPayment(fetch, client)(path, request(body, chosen));
      if (response.status !== 200) throw new Error(await errorText(response));
      const result = (await response.json()) as Record<string, unknown>;
      const settled = new x402HTTPClient(client).getPaymentSettleResponse((name) => response.headers.get(name));
      showResult(form, result);
      outcome.hidden = false;
      await showReceipt(form, settled.transaction, amount);
      quote.textContent = `Paid ${usdc(amount)}.`;
      quote.classList.add('paid');
      forget();
      await showBalance();
    } catch (error) {
      quote.textContent = `Not paid: ${error instanceof Error ? error.message : String(error)}`;
      quote.classList.add('error');
      payButton.disabled = quoted === undefined;
    } finally {
      quoteButton.disabled = false;
    }
  });
}

function wireTabs(): void {
  const tabs = [...document.querySelectorAll<HTMLButtonElement>('[data-tab]')];
  for (const tab of tabs) {
    tab.addEventListener('click', () => {
      for (const other of tabs) {
        other.setAttribute('aria-selected', String(other === tab));
        element(`#${other.dataset.tab}-form`).hidden = other !== tab;
      }
    });
  }
}

async function start(): Promise<void> {
  fillSelect(networkSelect, config.networks.map((n) => n.name), config.networks[0]?.name);
  networkSelect.addEventListener('change', showWallet);
  element('#fund-button').addEventListener('click', () => void fund());
  element('#new-wallet-button').addEventListener('click', () => {
    sessionStorage.removeItem(KEY_STORAGE);
    account = privateKeyToAccount(storedKey());
    walletStatus.textContent = 'A new empty wallet: fund it to pay.';
    showWallet();
  });
  showWallet();
  wireTabs();

  const listing = (await (await fetch('/api/v1/ai/models')).json()) as { models: ListedModel[] };
  models = listing.models;
  for (const form of document.querySelectorAll<HTMLFormElement>('form.paid')) {
    const own = models.filter((m) => m.capability === form.dataset.capability);
    fillSelect(element<HTMLSelectElement>('[name=model]', form), own.map((m) => m.id), own[0]?.id);
    showModel(form);
    wirePaidForm(form);
  }
  document.body.dataset.ready = 'true';
}

start().catch((error: unknown) => {
  walletStatus.textContent = `The playground could not start: ${String(error)}`;
});
