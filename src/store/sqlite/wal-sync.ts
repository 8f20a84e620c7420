/**
 * Durable commits without blocking the event loop. With SQLite's
 * synchronous=FULL the fsync of the write-ahead log runs inside COMMIT, on
 * the event loop: about a millisecond per group commit here, during which no
 * request is parsed or answered (durable creates ran at 0.7x of fsync-off,
 * measured). Instead the store commits with synchronous=NORMAL (the log is
 * written, and SQLite still syncs around checkpoints, so the file stays
 * consistent) and this class flushes the log with fdatasync on libuv's
 * thread pool; a commit's writes are answered only after a flush that
 * started after the commit has finished. One flush runs at a time: commits
 * made while it runs share the next one (unless `shared` is off: then each
 * waits for a flush of its own, for A/B runs).
 */
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class WalSync {
  readonly #fd: number;
  #running = false;
  /** Waiting for the flush after the running one. */
  #next: Waiter[] = [];
  #idle: (() => void)[] = [];
  readonly #shared: boolean;

  /**
   * Opens the database's log file (it exists once the connection has read or
   * written in WAL mode) and makes it and its directory entry durable now, so
   * everything committed before this process started is on disk too.
   */
  constructor(databaseFile: string, options: { readonly shared?: boolean } = {}) {
    this.#shared = options.shared ?? true;
    this.#fd = openSync(`${databaseFile}-wal`, 'r');
    fdatasyncSync(this.#fd);
    const dir = openSync(dirname(databaseFile), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }

  /** Resolves once everything written to the log before this call is on disk. */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#next.push({ resolve, reject });
      if (!this.#running) this.#start();
    });
  }

  #start(): void {
    const waiters = this.#shared ? this.#next.splice(0) : this.#next.splice(0, 1);
    this.#running = true;
    fdatasync(this.#fd, (error) => {
      this.#running = false;
      for (const w of waiters) {
        if (error === null) w.resolve();
        else w.reject(error);
      }
      if (this.#next.length > 0) this.#start();
      else for (const done of this.#idle.splice(0)) done();
    });
  }

  /** Waits for the flushes under way, then closes the file. */
  async close(): Promise<void> {
    if (this.#running) await new Promise<void>((resolve) => this.#idle.push(resolve));
    closeSync(this.#fd);
  }
}
