/**
 * One process per SQLite file. Each process wakes only its own event streams
 * and keeps its own change feed, so a second process on the same file would
 * serve stale streams (the other's writes reach them only by the 5 s poll).
 *
 * The lock is an empty SQLite file beside the store (`<file>-lock`) in which
 * the holder keeps a `BEGIN IMMEDIATE` transaction open, never writing: that
 * is SQLite's RESERVED lock, which one connection at a time may hold, kept
 * until the connection closes; the operating system drops it when the
 * process ends, however it ends, so a crash leaves no stale lock. (EXCLUSIVE
 * locking mode was tried first: its shared lock, never given back, let two
 * waiters block each other until both gave up.) The file stays: removing it
 * while another process waits on it would let both hold a lock, each on a
 * different file. It is named after the store's real path, so a symbolic
 * link to the file (even one to a file not made yet) finds the same lock.
 * Nothing here opens the lock file through `fs`: closing any descriptor of a
 * file drops every POSIX lock the process holds on it.
 *
 * A second process first tries once, says it waits (`onWait`), then waits
 * (SQLite's busy handler) for up to `waitMs`, which lets a restart overlap
 * the old process's graceful stop, then gives up.
 */
import { accessSync, constants, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { isBusy } from './errors.ts';
import { openDatabase, pragma } from './native-handles.ts';

export class SqliteFileInUse extends Error {
  override name = 'SqliteFileInUse';
}

export interface InstanceLockOptions {
  readonly waitMs: number;
  /** Called once, before a wait begins, when another process or store holds the file. */
  readonly onWait?: (lockFile: string, waitMs: number) => void;
}

/** As many symbolic links as the kernel follows in one path. */
const MAX_LINKS = 40;

/**
 * `<file>-lock` beside the file's real path: each symbolic link followed
 * (one to a file not made yet too: SQLite will make it there), then the
 * directory resolved.
 */
export function lockFileOf(filename: string): string {
  let path = resolve(filename);
  for (let links = 0; ; links += 1) {
    let target: string;
    try {
      target = readlinkSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Not a link (EINVAL), or nothing there yet (ENOENT): this is the file's own name.
      if (code === 'EINVAL' || code === 'ENOENT') break;
      throw error;
    }
    if (links === MAX_LINKS) throw new Error(`too many symbolic links: ${filename}`);
    path = resolve(dirname(path), target);
  }
  return `${join(realpathSync(dirname(path)), basename(path))}-lock`;
}

export class InstanceLock {
  readonly #db: Database.Database;

  private constructor(db: Database.Database) {
    this.#db = db;
  }

  /** Blocks until the lock is held; throws SqliteFileInUse after `waitMs`. */
  static take(filename: string, options: InstanceLockOptions): InstanceLock {
    const lockFile = lockFileOf(filename);
    let db: Database.Database;
    try {
      db = openDatabase(lockFile);
    } catch (error) {
      throw new Error(`cannot open the lock file ${lockFile}: ${(error as Error).message}`);
    }
    try {
      // SQLite opens a file it may not write read-only, where BEGIN IMMEDIATE takes only a read
      // lock: no hold at all. (access(), not an open and a close: see above.)
      accessSync(lockFile, constants.R_OK | constants.W_OK);
      // A first try that does not wait (the driver's default is 5 s); no journal file beside it.
      pragma(db, 'busy_timeout = 0');
      pragma(db, 'journal_mode = MEMORY');
      const begin = db.prepare('BEGIN IMMEDIATE');
      try {
        begin.run();
      } catch (error) {
        if (!isBusy(error) || options.waitMs === 0) throw error;
        options.onWait?.(lockFile, options.waitMs);
        pragma(db, `busy_timeout = ${options.waitMs}`);
        begin.run();
      }
      return new InstanceLock(db);
    } catch (error) {
      db.close();
      if (isBusy(error)) {
        throw new SqliteFileInUse(
          `the SQLite file ${filename} is in use by another process or store (one per file; waited ${options.waitMs} ms for ${lockFile})`,
        );
      }
      throw new Error(`cannot lock ${lockFile}: ${(error as Error).message}`);
    }
  }

  release(): void {
    if (this.#db.open) this.#db.close();
  }
}
