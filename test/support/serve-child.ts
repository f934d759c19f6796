// Runs the service in its own process for tests that kill it: config as JSON in GATEWAY_CONFIG,
// secrets in the environment; prints "listening <url>" once ready.
import { loadConfig } from '../../src/config/load.ts';
import { startService } from '../../src/service.ts';

const service = await startService(loadConfig(process.env, JSON.parse(process.env.GATEWAY_CONFIG ?? '{}')));
console.log(`listening ${service.url}`);
process.once('SIGTERM', () => void service.stop().then(() => process.exit(0)));
