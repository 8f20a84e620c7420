/**
 * Writes to the trigram index (message_search, migration 5) from the store,
 * in the transaction of each create, edit and delete: left for the end of
 * that transaction (SqliteSession.atCommit), so that FTS5 writes a batch's
 * entries out once, not once per write (see write-batcher.ts). Until
 * migration 6 triggers did this, inside each write's savepoint.
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteSession } from './sqlite-store.ts';

export class SqliteSearchIndex {
  readonly #session: SqliteSession;
  readonly #insert: Statement;
  readonly #delete: Statement;

  constructor(session: SqliteSession) {
    this.#session = session;
    this.#insert = session.db.prepare('INSERT INTO message_search (rowid, text) VALUES (?, ?)');
    // contentless_delete=1: a row is deleted by its rowid alone, without its old text.
    this.#delete = session.db.prepare('DELETE FROM message_search WHERE rowid = ?');
  }

  /** A new message's text under its search_rowid. */
  added(rowid: number, text: string): void {
    this.#session.atCommit(() => this.#insert.run(rowid, text));
  }

  /** An edited message: its old entry out, the new text in. */
  changed(rowid: number, text: string): void {
    this.#session.atCommit(() => {
      this.#delete.run(rowid);
      this.#insert.run(rowid, text);
    });
  }

  removed(rowid: number): void {
    this.#session.atCommit(() => this.#delete.run(rowid));
  }
}
