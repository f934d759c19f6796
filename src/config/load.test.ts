import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './load.ts';
import type { SpeechModelConfig } from './schema.ts';

const UPSTREAM = { up: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } };
const price = { perRequest: '1000', perThousandChars: '1000' };

function speechModels(...entries: Record<string, unknown>[]): SpeechModelConfig[] {
  const models = entries.map((entry, i) => ({ id: `tts-${i}`, capability: 'speech', voices: ['a'], defaultVoice: 'a', maxTextLength: 100, price, ...entry }));
  return loadConfig({}, { providers: UPSTREAM, models }).models as SpeechModelConfig[];
}

test('the embedded speech model offers wav, mp3 and ogg, wav by default', () => {
  const speech = loadConfig({}).models.find((m) => m.capability === 'speech') as SpeechModelConfig;
  assert.deepEqual([speech.formats, speech.defaultFormat], [['wav', 'mp3', 'ogg'], 'wav']);
});

test('formats left out: what the provider gives; default format left out: the first listed', () => {
  const [espeak, upstream, listed] = speechModels(
    { provider: 'local-espeak' },
    { provider: 'up' },
    { provider: 'local-espeak', formats: ['ogg', 'wav'] },
  );
  assert.deepEqual([espeak!.formats, espeak!.defaultFormat], [['wav', 'mp3', 'ogg'], 'wav']);
  // an OpenAI-compatible server answers mp3 when no format is named, as before formats existed
  assert.deepEqual([upstream!.formats, upstream!.defaultFormat], [['mp3'], 'mp3']);
  assert.deepEqual([listed!.formats, listed!.defaultFormat], [['ogg', 'wav'], 'ogg']);
});

test('formats a provider cannot produce, a default outside the list and unknown names stop startup', () => {
  assert.throws(() => speechModels({ provider: 'up', formats: ['mp3', 'ogg'] }), (error: Error) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /model tts-0: provider up cannot produce ogg \(it can: mp3, opus, aac, flac, wav\)/);
    return true;
  });
  assert.throws(() => speechModels({ provider: 'local-espeak', formats: ['flac'] }), /local-espeak cannot produce flac/);
  assert.throws(() => speechModels({ provider: 'local-espeak', formats: ['mp3'], defaultFormat: 'wav' }), /defaultFormat is not in formats/);
  assert.throws(() => speechModels({ provider: 'local-espeak', formats: ['aiff'] }), /formats/);
});

test('a catalog entry cannot allow an option that would change what was priced or where the call goes', () => {
  const chat = { capability: 'chat', provider: 'up', maxTokens: 100, defaultMaxTokens: 10, price: { perRequest: '1', perThousandOutputTokens: '1', perThousandInputChars: '1' } };
  for (const key of ['model', 'max_tokens', 'maxTokens', 'n', 'size', 'response_format', 'responseFormat', 'stream_options', 'baseURL', 'api_key']) {
    assert.throws(
      () => loadConfig({}, { providers: UPSTREAM, models: [{ ...chat, id: 'c', allowedOptions: ['seed', key] }] }),
      (error: Error) => error instanceof ConfigError && error.message.includes(`${key} can never be passed as an option`),
      key,
    );
  }
  assert.deepEqual(loadConfig({}, { providers: UPSTREAM, models: [{ ...chat, id: 'c', allowedOptions: ['seed', 'top_k'] }] }).models[0]!.allowedOptions, ['seed', 'top_k']);
});

test('an embedded engine\'s catalog entry may allow only options the engine reads', () => {
  const speech = { id: 's', capability: 'speech', provider: 'local-espeak', voices: ['en-us'], defaultVoice: 'en-us', maxTextLength: 100, price };
  assert.throws(
    () => loadConfig({}, { models: [{ ...speech, allowedOptions: ['speed', 'volume'] }] }),
    /model s: local-espeak reads no option volume \(it reads: speed, pitch\)/,
  );
  assert.deepEqual(loadConfig({}, { models: [{ ...speech, allowedOptions: ['pitch'] }] }).models[0]!.allowedOptions, ['pitch']);
});

test('the service name and tags catalogues see meet the bazaar rules, checked by @x402/extensions', async () => {
  const { isValidServiceName, sanitizeTags } = await import('@x402/extensions/bazaar');
  const { service } = loadConfig({});
  assert.ok(isValidServiceName(service.name));
  assert.deepEqual(sanitizeTags(service.tags), service.tags, 'no default tag is dropped');
  const custom = loadConfig({}, { service: { name: 'My AI', tags: ['llm'] } }).service;
  assert.deepEqual([custom.name, custom.tags], ['My AI', ['llm']]);
  assert.match(custom.description, /x402/, 'an omitted description keeps the default');
});

test('a service name or tag a catalogue would drop stops startup, naming the setting', () => {
  const refused = (service: Record<string, unknown>, field: RegExp) =>
    assert.throws(() => loadConfig({}, { service }), (error: Error) => error instanceof ConfigError && field.test(error.message));
  refused({ name: 'x'.repeat(33) }, /service\.name/);
  refused({ name: 'Café IA' }, /service\.name/);
  refused({ tags: ['a', 'b', 'c', 'd', 'e', 'f'] }, /service\.tags/);
  refused({ tags: [''] }, /service\.tags/);
  refused({ description: 'two\nlines' }, /service\.description/);
  refused({ iconUrl: 'https://x.example/i.png' }, /iconUrl/);
});

test('failed attempts per proof: 3 unsettled and 5 settled first by default, each at least 1', () => {
  assert.deepEqual(loadConfig({}, {}).maxFailedAttempts, { unsettled: 3, settled: 5 });
  assert.deepEqual(loadConfig({}, { maxFailedAttempts: { settled: 10 } }).maxFailedAttempts, { unsettled: 3, settled: 10 });
  assert.throws(
    () => loadConfig({}, { maxFailedAttempts: { unsettled: 0, settled: 1.5 } }),
    (error: Error) => error instanceof ConfigError && /maxFailedAttempts\.unsettled/.test(error.message) && /maxFailedAttempts\.settled/.test(error.message),
  );
});

test('a payment validity longer than the x402-ai clients sign (an hour) stops startup, naming the capability', () => {
  assert.throws(
    () => loadConfig({}, { maxTimeoutSeconds: { chat: 60, image: 7200, speech: 60 } }),
    (error: Error) => error instanceof ConfigError && /maxTimeoutSeconds\.image/.test(error.message) && /3600/.test(error.message),
  );
});

test('a timer setting past what setTimeout takes, or a retention past a century, stops startup, each named', () => {
  assert.throws(
    () => loadConfig({}, { reconcileIntervalMs: 3_000_000_000, readinessCheckIntervalMs: 2 ** 31, ledgerRetentionDays: 1e12, mediaRetentionDays: 1e12 }),
    (error: Error) =>
      error instanceof ConfigError &&
      ['reconcileIntervalMs', 'readinessCheckIntervalMs', 'ledgerRetentionDays', 'mediaRetentionDays'].every((name) => error.message.includes(name)) &&
      /24\.8 days/.test(error.message),
  );
  assert.equal(loadConfig({}, { reconcileIntervalMs: 2 ** 31 - 1 }).reconcileIntervalMs, 2 ** 31 - 1);
});

test('publicUrl is an http(s) origin: a path, query, fragment, credentials or another scheme stops startup, the password never quoted', () => {
  for (const publicUrl of ['https://gw.example', 'https://gw.example/', 'http://127.0.0.1:4021']) assert.equal(loadConfig({}, { publicUrl }).publicUrl, publicUrl);
  for (const publicUrl of ['https://gw.example/prefix', 'https://gw.example/?t=1', 'https://user:s3cret@gw.example', 'https://gw.example#f', 'javascript:alert(1)//', 'file:///etc']) {
    assert.throws(
      () => loadConfig({}, { publicUrl }),
      (error: Error) => error instanceof ConfigError && /publicUrl: an (origin only|http\(s\) URL)/.test(error.message) && !error.message.includes('s3cret'),
      publicUrl,
    );
  }
});

test('the sandbox chains listen where SANDBOX_HOST, SANDBOX_PORT_BASE and SANDBOX_PUBLIC_HOST say, over the file', () => {
  assert.deepEqual(loadConfig({}).sandbox.host, '127.0.0.1');
  const fromEnv = loadConfig({ SANDBOX_HOST: '0.0.0.0', SANDBOX_PORT_BASE: '8545', SANDBOX_PUBLIC_HOST: 'localhost', SANDBOX_NETWORKS: 'base,solana' });
  assert.deepEqual(fromEnv.sandbox, { enabled: true, networks: ['base', 'solana'], host: '0.0.0.0', portBase: 8545, publicHost: 'localhost', keepState: true });
  const merged = loadConfig({ SANDBOX_HOST: '::', SANDBOX_KEEP_STATE: 'false' }, { sandbox: { enabled: true, networks: ['base'], portBase: 9000 } });
  assert.deepEqual(merged.sandbox, { enabled: true, networks: ['base'], host: '::', portBase: 9000, keepState: false });
});

test('bad sandbox listen settings stop startup, each one named', () => {
  assert.throws(
    () => loadConfig({ SANDBOX_HOST: 'http://0.0.0.0', SANDBOX_PORT_BASE: 'eighty', SANDBOX_PUBLIC_HOST: 'gateway.example:8545' }),
    (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /3 problems/);
      assert.match(error.message, /sandbox\.host: "http:\/\/0\.0\.0\.0" is not an IP address or host name/);
      assert.match(error.message, /sandbox\.portBase: /);
      assert.match(error.message, /sandbox\.publicHost: "gateway\.example:8545" is not an IP address or host name/);
      return true;
    },
  );
  assert.throws(() => loadConfig({ SANDBOX_PORT_BASE: '65535' }), /portBase \+ the number of sandbox networks must stay within 65535/);
  assert.throws(() => loadConfig({ SANDBOX_PORT_BASE: '0' }), /sandbox\.portBase/);
  assert.throws(() => loadConfig({ LOG_FORMAT: 'yaml' }), /logFormat/);
});

test('PORT and DATABASE_URL that would not work are named at once, never the password', () => {
  assert.throws(
    () => loadConfig({ PORT: '1e3', DATABASE_URL: 'postgres://gateway:hunter2secret@db.internal:notaport/ledger' }),
    (error: Error) => {
      assert.match(error.message, /2 problems/);
      assert.match(error.message, /port: /);
      assert.match(error.message, /databaseUrl: not a valid URL/);
      assert.doesNotMatch(error.message, /hunter2secret/);
      return true;
    },
  );
  assert.equal(loadConfig({ PORT: ' 8080 ' }).port, 8080);
  assert.equal(loadConfig({ DATABASE_URL: 'postgresql:///ledger?host=/var/run/postgresql' }).databaseUrl, 'postgresql:///ledger?host=/var/run/postgresql');
});

test("the Docker image's sandbox listen settings are harmless in live mode: live networks, no sandbox", () => {
  const env = { SANDBOX_HOST: '0.0.0.0', SANDBOX_PORT_BASE: '8545', SANDBOX_PUBLIC_HOST: 'localhost' };
  const live = loadConfig(env, {
    networks: { base: { payTo: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', facilitator: { type: 'remote', url: 'https://facilitator.example' } } },
  });
  assert.equal(live.sandbox.enabled, false);
  assert.deepEqual(Object.keys(live.networks), ['base']);
});
