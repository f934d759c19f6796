// A throwaway PostgreSQL server for tests and benchmarks: initdb into a temp dir, the server on 127.0.0.1
// on a free port (its unix socket in the same temp dir), deleted again by stop().
//
// The binaries come from the Debian package `postgresql` (/usr/lib/postgresql/<version>/bin), or from the
// directory named by PG_BIN. initdb and postgres refuse to run as root, so as root they run as the
// `postgres` OS user (created by the Debian package) through runuser, and the temp dir is handed to it.
// The server is started directly (not through pg_ctl, which detaches it) under a small shell watchdog, so
// it dies with this process even when this process is killed (the same trick as the anvil sandbox).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { unusedPort } from './ports.ts';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PostgresServer {
  /** connection string of the `postgres` maintenance database (superuser, trust auth on 127.0.0.1) */
  url: string;
  port: number;
  dataDir: string;
  /** creates a fresh, empty database and returns its connection string */
  createDatabase(name?: string): Promise<string>;
  /** stops the server (immediate shutdown: the data is thrown away) and deletes the temp dir; safe to call twice */
  stop(): Promise<void>;
  /**
   * Stops the server as an operator's restart does (`pg_ctl stop -m fast`: every session is ended with 57P01
   * admin_shutdown) and keeps its data; resume() starts it again on the same port.
   */
  halt(): Promise<void>;
  /** starts a halted server again, same data, same port; resolves once it accepts queries */
  resume(): Promise<void>;
}

export interface PostgresServerOptions {
  /**
   * false (default, for tests): fsync off, no synchronous commit; durability is pointless for throwaway data.
   * true (benchmarks): the server's production defaults (fsync, synchronous_commit on).
   */
  durable?: boolean;
  /** extra `-c name=value` settings */
  settings?: Record<string, string>;
}

const INSTALL_HINT =
  'install the Debian/Ubuntu package "postgresql" (apt-get install -y postgresql; .ci/run does this on CI), ' +
  'or point PG_BIN at a directory holding initdb and postgres';

/** Directory of initdb/postgres/pg_ctl: PG_BIN, else the newest /usr/lib/postgresql/<v>/bin, else PATH. */
export function findPostgresBin(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debianRoot, v, 'bin')));
  }
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) candidates.push(join(onPath.stdout.trim(), '..'));
  const found = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')));
  if (!found) throw new Error(`PostgreSQL server binaries (initdb, postgres) not found: ${INSTALL_HINT}`);
  return found;
}

/** As root, commands run as the `postgres` OS user; otherwise as ourselves. */
function asServerUser(): { wrap: (argv: string[]) => string[]; uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return { wrap: (argv) => argv };
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error(`running as root, but there is no "postgres" OS user to run the server as: ${INSTALL_HINT}`);
  }
  return { wrap: (argv) => ['runuser', '-u', 'postgres', '--', ...argv], uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

function run(argv: string[]): void {
  const [command, ...args] = argv as [string, ...string[]];
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${argv.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`);
  }
}

// Reads our end of the stdin pipe; when it closes (this process exited, however) the server is killed.
const WATCHDOG = `
exec 3<&0
"$0" "$@" </dev/null &
pid=$!
( read _ <&3; kill -9 "$pid" 2>/dev/null ) &
wait "$pid"
`;

let counter = 0;

export async function startPostgres(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = findPostgresBin();
  const user = asServerUser();
  const dataDir = mkdtempSync(join(tmpdir(), 'x402-pg-'));
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dataDir, user.uid, user.gid);
  const pgdata = join(dataDir, 'data');
  const superuser = user.uid !== undefined ? 'postgres' : userInfo().username;
  let child: ChildProcess | undefined;
  let stopped = false;

  /** pg_ctl stop in `mode`, then waits for the server (and its watchdog) to exit */
  const shutdown = async (mode: 'immediate' | 'fast'): Promise<void> => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
    const [command, ...args] = user.wrap([join(bin, 'pg_ctl'), 'stop', '-D', pgdata, '-m', mode, '-w', '-t', '10']);
    spawnSync(command!, args, { stdio: 'ignore' });
    child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
    clearTimeout(timer);
    child.stderr?.destroy();
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // immediate shutdown: the data is thrown away anyway; the watchdog shell follows the server out
    await shutdown('immediate');
    rmSync(dataDir, { recursive: true, force: true });
  };

  /** Starts the server on `port` under the watchdog; its stderr, and whether it came up within 20 s. */
  const launch = async (port: number, settings: Record<string, string>): Promise<{ url: string; ready: boolean; stderr: () => string }> => {
    const args = ['-D', pgdata, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const argv = user.wrap(['sh', '-c', WATCHDOG, join(bin, 'postgres'), ...args]);
    child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 20_000) stderr += chunk.toString();
    });
    const url = `postgresql://${superuser}@127.0.0.1:${port}/postgres`;
    const ready = await waitUntilReady(url, child, 20_000);
    if (ready) child.stderr!.resume();
    return { url, ready, stderr: () => stderr };
  };

  try {
    run(user.wrap([join(bin, 'initdb'), '-D', pgdata, '-U', superuser, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']));
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: dataDir,
      max_connections: '200',
      ...(options.durable ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }),
      ...options.settings,
    };
    let lastError = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await unusedPort();
      const { url, ready, stderr } = await launch(port, settings);
      if (ready) {
        return {
          url,
          port,
          dataDir,
          stop,
          halt: () => shutdown('fast'),
          async resume() {
            const again = await launch(port, settings);
            if (!again.ready) throw new Error(`PostgreSQL did not start again: ${again.stderr().slice(-2_000) || '(no output)'}`);
          },
          async createDatabase(name = `test_${process.pid}_${++counter}`) {
            const admin = new pg.Client({ connectionString: url });
            await admin.connect();
            try {
              await admin.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
            } finally {
              await admin.end();
            }
            return `postgresql://${superuser}@127.0.0.1:${port}/${name}`;
          },
        };
      }
      lastError = stderr();
      child!.stdin?.end();
      child!.kill('SIGKILL');
      if (!/could not bind|address already in use/i.test(lastError)) break;
    }
    throw new Error(`PostgreSQL did not start: ${lastError.slice(-2_000) || '(no output)'}`);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return true;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return false;
}
