/** What every recorded figure names: the machine, Node, the commit (and whether the tree was dirty). */
import { spawnSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly node: string;
  readonly commit: string;
  /** Uncommitted changes outside bench/results when the run started. */
  readonly dirty: boolean;
}

function git(args: string[], cwd: string): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : '';
}

export function machineInfo(root: string): MachineInfo {
  const list = cpus();
  const status = git(['status', '--porcelain', '--', '.', ':(exclude)bench/results'], root);
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    commit: git(['rev-parse', '--short=10', 'HEAD'], root) || 'unknown',
    dirty: status !== '',
  };
}
