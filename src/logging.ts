// The service's logger: pino writing to stdout through a buffered, asynchronous destination, so a request
// line costs a memory append instead of a write(2) per request (the default pino destination writes
// synchronously). The buffer is written once it holds BUFFER_BYTES, at most FLUSH_INTERVAL_MS after a line,
// and synchronously on exit: a normal exit, process.exit() in a shutdown, or an uncaught exception (Node
// emits 'exit' for each). Only a SIGKILL or a native crash can lose the last lines.
// On a terminal (or LOG_FORMAT=pretty) the same lines are rewritten for a person first (pretty-log.ts).
// Whatever a line holds, no credential of a URL reaches the output (every line goes through redactUrlSecrets),
// and an error logged as `err` is described, never dumped (describeError: no prompt, no upstream message).
import { isatty } from 'node:tty';
import { pino, type Logger, type LevelWithSilent, type LoggerOptions } from 'pino';
import { prettyDestination } from './pretty-log.ts';
import { describeError, redactUrlSecrets } from './lib/log-safety.ts';

export type LogFormat = 'json' | 'pretty';

/** The format asked for, else readable lines when the log goes to a terminal, else JSON. */
export const logFormatFor = (format: LogFormat | undefined, fd: number): LogFormat => format ?? (isatty(fd) ? 'pretty' : 'json');

const BUFFER_BYTES = 8 * 1024; // sonic-boom wants it below its 16 KiB maxWrite
const FLUSH_INTERVAL_MS = 250;

type Destination = ReturnType<typeof pino.destination>;
const open = new Set<Destination>();
let exitHook = false;

function flushAllNow(): void {
  for (const destination of open) {
    try {
      destination.flushSync();
    } catch {
      // not ready yet (nothing written) or the stream is gone: nothing left to save
    }
  }
}

export function createLogger(level: LevelWithSilent, fd = 1, format?: LogFormat): Logger {
  const destination = pino.destination({ dest: fd, sync: false, minLength: BUFFER_BYTES });
  open.add(destination);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', flushAllNow);
    setInterval(() => {
      for (const d of open) {
        try {
          d.flush();
        } catch {
          // a destroyed stream: nothing to write
        }
      }
    }, FLUSH_INTERVAL_MS).unref();
  }
  const options: LoggerOptions = { level, serializers: { err: (error: unknown) => describeError(error) }, hooks: { streamWrite: redactUrlSecrets } };
  if (logFormatFor(format, fd) === 'json') return pino(options, destination);
  const color = isatty(fd) && !process.env.NO_COLOR;
  return pino(options, prettyDestination(destination, color));
}
