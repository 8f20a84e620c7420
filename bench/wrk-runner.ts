/**
 * Drives a server with Debian's `wrk` (one thread, pinned to the client
 * core) and reads back the line bench/lua/report.lua prints when it is done.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinned, type Cores } from './server-process.ts';

export interface WrkResult {
  readonly requests: number;
  readonly durationUs: number;
  readonly bytes: number;
  readonly errors: {
    readonly connect: number;
    readonly read: number;
    readonly write: number;
    readonly status: number;
    readonly timeout: number;
  };
  readonly latencyUs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
    readonly mean: number;
  };
  /** What the script printed on its WRK_EXTRA line, if it has one (conversations.lua). */
  readonly extra?: unknown;
}

export interface WrkRun {
  readonly url: string;
  /** A scenario script in bench/lua, or undefined for a plain GET of `url`. */
  readonly script?: string;
  /** Passed to the script's init(args) (after `--`). */
  readonly args?: readonly string[];
  readonly connections: number;
  readonly seconds: number;
  /** wrk threads (default 1); conversations.lua runs one per connection. */
  readonly threads?: number;
}

/** Installs wrk with apt-get when it is missing (the harness needs it; root can install). */
export function ensureWrk(): string {
  const version = () => spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  let found = version();
  if (found.error !== undefined) {
    process.stderr.write('wrk is missing: installing it with apt-get\n');
    const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
    const run = (args: string[]) => {
      const [cmd, ...rest] = [...sudo, ...args];
      const result = spawnSync(cmd!, rest, { stdio: 'inherit' });
      if (result.status !== 0) throw new Error(`'${args.join(' ')}' failed`);
    };
    run(['apt-get', 'update']);
    run(['apt-get', 'install', '-y', 'wrk']);
    found = version();
    if (found.error !== undefined) throw new Error('wrk is still missing after apt-get install');
  }
  return `${found.stdout}${found.stderr}`.split('\n')[0]!.trim();
}

/** Joins the shared Lua pieces with a scenario script into one file wrk can load. */
export function scriptFile(luaDir: string, tmpDir: string, script: string | undefined): string {
  const parts = [
    script === undefined ? '' : readFileSync(join(luaDir, 'ids.lua'), 'utf8'),
    script === undefined ? '' : readFileSync(join(luaDir, script), 'utf8'),
    readFileSync(join(luaDir, 'report.lua'), 'utf8'),
  ];
  const file = join(tmpDir, `wrk-${script ?? 'plain.lua'}`);
  writeFileSync(file, parts.join('\n'));
  return file;
}

export function runWrk(
  cores: Cores,
  run: WrkRun,
  dirs: { lua: string; tmp: string },
): Promise<WrkResult> {
  const script = scriptFile(dirs.lua, dirs.tmp, run.script);
  const command = pinned(cores, cores.client, [
    'wrk',
    `-t${run.threads ?? 1}`,
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    script,
    run.url,
    ...(run.args === undefined ? [] : ['--', ...run.args]),
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('WRK_RESULT '));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk failed (${code}) on ${run.url}:\n${out}`));
        return;
      }
      const result = JSON.parse(line.slice('WRK_RESULT '.length)) as WrkResult;
      const extra = out.split('\n').find((l) => l.startsWith('WRK_EXTRA '));
      resolve(
        extra === undefined
          ? result
          : { ...result, extra: JSON.parse(extra.slice('WRK_EXTRA '.length)) },
      );
    });
  });
}

export function requestsPerSecond(result: WrkResult): number {
  return result.requests / (result.durationUs / 1e6);
}

export function errorCount(result: WrkResult): number {
  const e = result.errors;
  return e.connect + e.read + e.write + e.status + e.timeout;
}
