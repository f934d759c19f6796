// Entry point: `npm start`. Loads the config, starts the service, and shuts down gracefully on SIGTERM/SIGINT.
import { loadConfig, ConfigError } from './config/load.ts';
import { startService } from './service.ts';

try {
  const service = await startService(loadConfig());
  const shutdown = (signal: string) => {
    service.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    void service.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  // anything else is still said in one line: an operator reads a reason, not a stack trace
  console.error(`startup failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
