/**
 * An earlier commit, built beside this one, so a figure can be measured
 * "before and after" in one run, interleaved: `git worktree add` of that
 * commit in bench/results/tmp, node_modules linked from this checkout, and its
 * own `tsc` build. The caller runs `dist/server.js` with the returned cwd.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

export interface BaselineBuild {
  /** The commit, abbreviated. */
  readonly commit: string;
  /** Run `node dist/server.js` here. */
  readonly cwd: string;
  remove(): void;
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
  }
  return result.stdout.trim();
}

export function buildBaseline(root: string, tmp: string, rev: string): BaselineBuild {
  const commit = run('git', ['rev-parse', '--short=10', rev], root);
  const dir = join(tmp, `baseline-${commit}`);
  if (existsSync(dir)) run('git', ['worktree', 'remove', '--force', dir], root);
  run('git', ['worktree', 'add', '--detach', dir, commit], root);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  run(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    dir,
  );
  return {
    commit,
    cwd: dir,
    remove: () => {
      spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
