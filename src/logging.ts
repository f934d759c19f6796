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

const BUFFER_BYTES = 8 * 1024;
const FLUSH_INTERVAL_MS = 250;

type Destination = ReturnType<typeof pino.destination>;

/**
 * Lines held until they make BUFFER_BYTES, then handed to the asynchronous destination as one write. sonic-boom
 * can hold them itself (its minLength), but it measures the whole text it holds again on every line
 * (Buffer.byteLength of the string it appends to, up to 8 KB): a request line cost 10-15 us that way and 1.8-2.0 us
 * this way, pino's own JSON (1.3-2.4 us to a no-op stream) included (micro-benchmark, a request line to /dev/null,
 * 100,000 lines, best of 5 rounds, the shared 2-core machine).
 */
class HeldLines {
  private lines: string[] = [];
  private size = 0;
  private readonly fd: number;
  private readonly destination: Destination;

  constructor(fd: number) {
    this.fd = fd;
    this.destination = pino.destination({ dest: fd, sync: false });
  }

  write(line: string): void {
    this.lines.push(line);
    this.size += line.length;
    if (this.size >= BUFFER_BYTES) this.flush();
  }

  /** hands what is held to the destination, which starts writing it at once */
  flush(): void {
    const text = this.take();
    if (text) this.destination.write(text);
  }

  /** on exit: what the destination holds, then what is held here, written before returning */
  flushSync(): void {
    this.destination.flushSync();
    const text = this.take();
    if (text) pino.destination({ dest: this.fd, sync: true }).write(text);
  }

  private take(): string {
    const text = this.lines.join('');
    this.lines = [];
    this.size = 0;
    return text;
  }
}

const open = new Set<HeldLines>();
let exitHook = false;

function flushAllNow(): void {
  for (const held of open) {
    try {
      held.flushSync();
    } catch {
      // the stream is gone: nothing left to save
    }
  }
}

/** Loggers made by createLogger: their lines are pino's default JSON (numeric level, epoch time, "msg"). */
const madeHere = new WeakSet<Logger>();

/** The fields of the request line (http/request-log.ts): `ms` rounded to hundredths. */
export interface RequestLineFields {
  reqId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * `log.info(fields, 'request')`, the one line per request: the same line, built directly in its fixed order
 * rather than by pino's generic serialiser, and redacted as every line is. A logger made elsewhere (a test's) takes
 * log.info.
 */
export function logRequestLine(log: Logger, fields: RequestLineFields): void {
  if (!log.isLevelEnabled('info')) return;
  if (!madeHere.has(log)) {
    log.info(fields, 'request');
    return;
  }
  const internals = log as unknown as Record<symbol, unknown>;
  const { reqId, method, path, status, ms } = fields;
  const line = `{"level":30,"time":${Date.now()}${internals[pino.symbols.chindingsSym] as string},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":${ms},"msg":"request"}\n`;
  (internals[pino.symbols.streamSym] as { write(text: string): void }).write(redactUrlSecrets(line));
}

export function createLogger(level: LevelWithSilent, fd = 1, format?: LogFormat): Logger {
  const held = new HeldLines(fd);
  open.add(held);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', flushAllNow);
    setInterval(() => {
      for (const h of open) {
        try {
          h.flush();
        } catch {
          // a destroyed stream: nothing to write
        }
      }
    }, FLUSH_INTERVAL_MS).unref();
  }
  const options: LoggerOptions = { level, serializers: { err: (error: unknown) => describeError(error) }, hooks: { streamWrite: redactUrlSecrets } };
  const color = isatty(fd) && !process.env.NO_COLOR;
  const log = pino(options, logFormatFor(format, fd) === 'json' ? held : prettyDestination(held, color));
  madeHere.add(log);
  return log;
}
