/**
 * A PostgreSQL cluster of the test's own (initdb into a temp dir, a free
 * port), so a test may stop and start it without touching the shared
 * PostgreSQL others use. Needs root (the cluster runs as the `postgres` OS
 * user) and the server binaries.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function binDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

/** False, or why a private cluster cannot be made here. */
export function privatePostgresUnavailable(): string | false {
  if (process.getuid?.() !== 0) return 'root (for a private PostgreSQL cluster)';
  if (binDir() === undefined) return 'PostgreSQL server binaries (/usr/lib/postgresql/*/bin)';
  return false;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface PrivatePostgres {
  readonly port: number;
  /** A DATABASE_URL for one schema of this cluster. */
  url(schema: string): string;
  start(): Promise<void>;
  /** `pg_ctl stop -m immediate` by default: like a crash, no goodbye to clients. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** SIGSTOP every process of the cluster: connections open but nothing answers (a hung database). */
  freeze(): Promise<void>;
  /** SIGCONT what `freeze` stopped. */
  thaw(): Promise<void>;
  /** Stops the cluster and removes its files (never throws). */
  destroy(): Promise<void>;
  log(): string;
}

export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (bin === undefined) throw new Error('no PostgreSQL server binaries');
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  const dir = mkdtempSync(join(tmpdir(), 'faults-pg-'));
  chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const asPostgres = (tool: string, args: string[]) =>
    run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { timeout: 60_000 });

  await asPostgres('initdb', [
    '-D',
    data,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const port = await freePort();
  // fsync=off: this cluster is only ever stopped like a crashed process, never like a power
  // cut, and the page cache survives that; it keeps a 2-core machine responsive.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  let frozen: number[] = [];
  const clusterPids = (): number[] => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after ')'.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  const signalAll = (pids: number[], signal: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone already
      }
    }
  };
  const pg: PrivatePostgres = {
    port,
    url: (schema) => `postgres://postgres@127.0.0.1:${port}/postgres?schema=${schema}`,
    start: async () => {
      await asPostgres('pg_ctl', [
        '-D',
        data,
        '-l',
        logFile,
        '-o',
        options,
        '-w',
        '-t',
        '60',
        'start',
      ]);
    },
    stop: async (mode = 'immediate') => {
      await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    freeze: async () => {
      frozen = clusterPids();
      signalAll(frozen, 'SIGSTOP');
    },
    thaw: async () => {
      signalAll(frozen, 'SIGCONT');
      frozen = [];
    },
    destroy: async () => {
      signalAll(frozen, 'SIGCONT');
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(
        () => undefined,
      );
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-4000) : ''),
  };
  await pg.start();
  return pg;
}
