/**
 * The service as a real process (`node --import tsx src/server.ts`), as an
 * operator runs it: settings from the environment, the address read from the
 * "Server listening at" log line. Fault tests kill, stop and restart it.
 *
 * Its output goes to a file, not a pipe: pino writes synchronously, and a
 * pipe that the (busy) test process drains late would stall the service's
 * event loop and skew every latency the tests measure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './fault-report.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const START_TIMEOUT_MS = 30_000;
const LOG_TAIL_CHARS = 6000;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** The end of its log (stdout and stderr), for failure messages. */
  logTail(): string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<Exit>;
  /** SIGTERM, and wait for the exit. */
  terminate(): Promise<Exit>;
}

/** Settings every fault test wants: any free port, no rate limits, info logs (for the address). */
const BASE_ENV: Record<string, string> = {
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  RATE_LIMIT_WRITE: 'off',
  RATE_LIMIT_READ: 'off',
};

const logDir = mkdtempSync(join(tmpdir(), 'faults-logs-'));
let started = 0;
process.once('exit', () => {
  // FAULTS_KEEP_LOGS=1 keeps every service's whole log (for debugging a failure).
  if (process.env.FAULTS_KEEP_LOGS === undefined) rmSync(logDir, { recursive: true, force: true });
  else process.stderr.write(`fault test service logs kept in ${logDir}\n`);
});

export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const logFile = join(logDir, `service-${++started}.log`);
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    // A clean environment: only what the service is told here (plus PATH/HOME for node itself).
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...BASE_ENV, ...env },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exit: Exit | undefined;
  void exited.then((e) => (exit = e));
  const logTail = () => {
    const fd = openSync(logFile, 'r');
    try {
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(size, LOG_TAIL_CHARS));
      readSync(fd, buffer, 0, buffer.length, size - buffer.length);
      return buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  };

  let url: string | undefined;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (url === undefined) {
    const match = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(logTail());
    if (match) url = match[1]!;
    else if (exit !== undefined) {
      throw new Error(`service exited before listening (${JSON.stringify(exit)}):\n${logTail()}`);
    } else if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start within ${START_TIMEOUT_MS} ms:\n${logTail()}`);
    } else {
      await sleep(25);
    }
  }

  const signal = async (name: NodeJS.Signals): Promise<Exit> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    return exited;
  };
  return {
    url,
    pid: child.pid!,
    child,
    exited,
    logTail,
    kill: () => signal('SIGKILL'),
    terminate: () => signal('SIGTERM'),
  };
}

/** Kills a service left running by a failed test (cleanup; never throws). */
export async function ensureStopped(service: ServiceProcess | undefined): Promise<void> {
  if (service === undefined) return;
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGKILL');
  await Promise.race([service.exited, sleep(5000)]);
}
