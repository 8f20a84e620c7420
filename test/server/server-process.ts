/**
 * The service as a real process (`node src/server.ts`, `npm run <script>` or
 * the build's `node dist/server.js`), for
 * the tests of what only a process has: settings at start, signals, exit
 * codes, a kill -9. Every process started here is killed by its PID when the
 * test ends, whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;
const started = new Set<ChildProcess>();
const serverPids = new Set<number>();

after(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  for (const pid of serverPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export interface ServerProcess {
  readonly child: ChildProcess;
  /** Resolves with the base URL once the log says it listens (rejects if it exits first). */
  readonly listening: Promise<string>;
  /** Resolves when the process exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The server's own PID (under npm, not npm's), once it logged. */
  serverPid(): number | undefined;
  stdout(): string;
  stderr(): string;
  /** Resolves when a log line with this message appears. */
  logged(msg: string | RegExp): Promise<Record<string, unknown>>;
}

export interface StartOptions {
  /** 'node' runs src/server.ts directly; 'npm' runs `npm run <script>`; 'build' runs `node dist/server.js`. */
  readonly via?: 'node' | 'npm' | 'build';
  /** The npm script, with `via: 'npm'` (default `start`). */
  readonly script?: string;
  readonly env?: Record<string, string>;
  readonly args?: readonly string[];
}

/** An environment without the test run's own settings, so only what a test gives counts. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_OPTIONS']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

export function startServer(options: StartOptions = {}): ServerProcess {
  const via = options.via ?? 'node';
  const extra = options.args ?? [];
  const [command, args] =
    via === 'npm'
      ? [
          'npm',
          ['run', options.script ?? 'start', '--silent', ...(extra.length ? ['--', ...extra] : [])],
        ]
      : via === 'build'
        ? [process.execPath, ['dist/server.js', ...extra]]
        : [process.execPath, ['--import', 'tsx', 'src/server.ts', ...extra]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...baseEnv(), LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let out = '';
  let err = '';
  let pid: number | undefined;
  const waiters: {
    match: (line: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    partial += chunk;
    const complete = partial.split('\n');
    partial = complete.pop()!;
    for (const text of complete) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof line.pid === 'number' && pid === undefined) {
        pid = line.pid;
        serverPids.add(pid);
      }
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const logged = (msg: string | RegExp) => {
    const match = (line: Record<string, unknown>) =>
      typeof line.msg === 'string' &&
      (typeof msg === 'string' ? line.msg === msg : msg.test(line.msg));
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      waiters.push({ match, resolve });
      void exited.then(() =>
        reject(new Error(`exited before logging ${String(msg)}: ${out}\n${err}`)),
      );
    });
  };
  const listening = logged(/^Server listening at /).then((line) =>
    (line.msg as string).replace('Server listening at ', '').replace('[::1]', '127.0.0.1'),
  );
  listening.catch(() => undefined);
  return {
    child,
    listening,
    exited,
    serverPid: () => pid,
    stdout: () => out,
    stderr: () => err,
    logged,
  };
}

/** Whether a process with this PID still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something listens on this port of 127.0.0.1 (a connection is accepted). */
export function listeningOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A temporary directory removed after the test file. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'msg-server-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Resolves with `promise`, or fails the test after `ms` (a bound, not a timing assertion). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function postMessage(base: string, content: string): Promise<Response> {
  return fetch(`${base}/api/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ author: 'ada', content }),
  });
}
