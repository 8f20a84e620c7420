/**
 * What a way of starting the service costs: the time from spawn until
 * /readyz answers 200, and the resident memory of the whole process tree
 * (npm and its children count too) when idle and under load.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { rssOf, statusOf } from './server-process.ts';

export interface StartCost {
  readonly startMs: number;
  readonly idleRssMiB: number;
  /** Every process of the tree, e.g. ['npm', 'node']. */
  readonly processes: readonly string[];
}

const MiB = 2 ** 20;

function parentOf(pid: number): { ppid: number; name: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), name };
  } catch {
    return undefined;
  }
}

/** `root` and every descendant, with their names. */
export function processTree(root: number): { pid: number; name: string }[] {
  const all = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => ({ pid: Number(entry), ...parentOf(Number(entry)) }))
    .filter((p): p is { pid: number; ppid: number; name: string } => p.ppid !== undefined);
  const tree = all.filter((p) => p.pid === root);
  for (let i = 0; i < tree.length; i++) {
    tree.push(...all.filter((p) => p.ppid === tree[i]!.pid));
  }
  return tree.map(({ pid, name }) => ({ pid, name }));
}

/** Resident memory of the whole tree, bytes. */
export function treeRss(root: number): number {
  return processTree(root).reduce((sum, p) => sum + (rssOf(p.pid) || 0), 0);
}

export interface StartedTree {
  readonly pid: number;
  readonly cost: StartCost;
  stop(): Promise<void>;
}

/** Spawns `command`, waits for /readyz, lets it settle idle for `settleMs`, and measures. */
export async function startAndMeasure(
  command: string[],
  options: { cwd: string; env: Record<string, string>; port: number; settleMs: number },
): Promise<StartedTree> {
  const began = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, PORT: String(options.port) },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 60_000;
  while ((await statusOf(`http://127.0.0.1:${options.port}/readyz`)) !== 200) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited at start`);
    if (Date.now() > deadline) throw new Error(`${command.join(' ')} did not become ready`);
    await sleep(10);
  }
  const startMs = performance.now() - began;
  await sleep(options.settleMs);
  const pid = child.pid!;
  const cost = {
    startMs,
    idleRssMiB: treeRss(pid) / MiB,
    processes: processTree(pid).map((p) => p.name),
  };
  return {
    pid,
    cost,
    stop: async () => {
      for (const p of processTree(pid).reverse()) {
        try {
          process.kill(p.pid, 'SIGTERM');
        } catch {
          // Gone already.
        }
      }
      await exited;
    },
  };
}
