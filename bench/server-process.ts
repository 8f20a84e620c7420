/**
 * The processes under test: the production build of the service, and the
 * floor server, each pinned to the server core, each a separate process so
 * the load generator never shares its event loop. Also reads a process's
 * resident memory from /proc, which is what the result files call RSS.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How every bench runs the service: on loopback, logging warnings only, with
 * rate limits off (a load generator is one client).
 */
export const SERVICE_SETTINGS = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_WRITE: 'off',
  RATE_LIMIT_READ: 'off',
} as const;

export interface Cores {
  /** taskset is present and there are at least two cores. */
  readonly pinned: boolean;
  readonly server: string;
  readonly client: string;
}

export function detectCores(cpuCount: number): Cores {
  const taskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
  return cpuCount >= 2 && taskset
    ? { pinned: true, server: '1', client: '0' }
    : { pinned: false, server: '', client: '' };
}

/** A command line pinned to a core, when pinning is possible. */
export function pinned(cores: Cores, core: string, command: string[]): string[] {
  return cores.pinned ? ['taskset', '-c', core, ...command] : command;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly baseUrl: string;
  /** Resident memory now, in bytes (VmRSS), or NaN once the process is gone. */
  rss(): number;
  /** CPU seconds used so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly name: string;
  readonly command: string[];
  readonly env: Record<string, string>;
  readonly port: number;
  /** A path answering 200 once the server is ready. */
  readonly readyPath: string;
  readonly cwd: string;
}

/** Starts a server process and waits until `readyPath` answers 200. */
export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const [file, ...args] = options.command;
  const child = spawn(file!, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const baseUrl = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`${options.name} exited at start (${child.exitCode}): ${stderr}`);
    }
    if ((await statusOf(`${baseUrl}${options.readyPath}`)) === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} did not become ready: ${stderr}`);
    }
    await sleep(100);
  }
  return {
    name: options.name,
    pid: child.pid!,
    baseUrl,
    rss: () => rssOf(child.pid!),
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    stop: () => stopProcess(child, exited),
  };
}

async function stopProcess(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** The status a GET of `url` answers, 0 when it does not answer within a second. */
export function statusOf(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** VmRSS of a process, in bytes. */
export function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) a process has used so far, in seconds (from /proc/<pid>/stat). */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: Linux reports utime/stime in 1/100 s on every common platform. */
const CLOCK_TICKS = 100;

/** Samples a process's RSS every `everyMs` until stopped; reports the peak. */
export function sampleRss(pid: number, everyMs = 50): { stop(): { peak: number; last: number } } {
  let peak = rssOf(pid);
  let last = peak;
  const timer = setInterval(() => {
    last = rssOf(pid);
    if (last > peak) peak = last;
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      last = rssOf(pid);
      if (last > peak) peak = last;
      return { peak, last };
    },
  };
}
