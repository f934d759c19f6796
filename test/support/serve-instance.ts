// The service as a child process, for tests that run several instances or kill one: the config (JSON) comes from
// X402_CHILD_CONFIG, secrets from this process's environment. Prints {"listening":"http://127.0.0.1:<port>"}
// on stdout once it accepts connections; its logs (pino JSON) follow on stdout. SIGTERM stops it gracefully;
// it also exits when its stdin closes, so it never outlives the test process. Started by child-service.ts.
import { loadConfig } from '../../src/config/load.ts';
import { startService } from '../../src/service.ts';

const raw = process.env.X402_CHILD_CONFIG;
if (!raw) throw new Error('X402_CHILD_CONFIG is not set');
// Only the given config counts: environment overrides (PORT, DATA_DIR, ...) of the test runner do not apply.
const service = await startService(loadConfig({}, JSON.parse(raw) as Record<string, unknown>));
process.stdout.write(`${JSON.stringify({ listening: service.url, pid: process.pid })}\n`);

const shutdown = () => void service.stop().then(() => process.exit(0), () => process.exit(1));
process.once('SIGTERM', shutdown);
process.stdin.on('end', shutdown);
process.stdin.resume();
