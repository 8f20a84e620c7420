/** Versioned schema of the SQLite store. Append only: a released migration never changes. */
export const sqliteMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'messages, change log, idempotency keys',
    sql: `
      CREATE TABLE messages (
        id         TEXT PRIMARY KEY,
        room       TEXT NOT NULL,
        author     TEXT NOT NULL,
        content    TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version    INTEGER NOT NULL
      );
      CREATE INDEX messages_room_id ON messages (room, id);

      CREATE TABLE changes (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        kind       TEXT NOT NULL,
        room       TEXT NOT NULL,
        message    TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE change_log_meta (
        id             INTEGER PRIMARY KEY CHECK (id = 1),
        purged_through INTEGER NOT NULL
      );
      INSERT INTO change_log_meta (id, purged_through) VALUES (1, 0);

      CREATE TABLE idempotency_keys (
        scope        TEXT NOT NULL,
        key          TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        token        TEXT NOT NULL,
        state        TEXT NOT NULL CHECK (state IN ('pending', 'done')),
        status       INTEGER,
        response     TEXT,
        claimed_at   INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotency_keys_claimed_at ON idempotency_keys (claimed_at);
    `,
  },
];
