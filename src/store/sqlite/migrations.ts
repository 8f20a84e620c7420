/**
 * Versioned schema of the SQLite store. Append only: a released migration
 * never changes. Run by the domain's runner (migration-runner.ts) through
 * sqliteMigrationTarget.
 */
import type Database from 'better-sqlite3';
import type { Migration, MigrationTarget } from '../../domain/migration-runner.ts';
import { searchText } from '../../domain/search-text.ts';

/**
 * The service holds its file (instance-lock.ts), but a process without that
 * lock (an earlier version still stopping, a tool, a store opened without
 * it) may find the same migration pending at the same time: each
 * migration runs in an IMMEDIATE transaction that first looks again whether
 * it was applied meanwhile, so the second process waits for the first's
 * write lock and then skips it. Each migration commits on its own: an upgrade
 * cut short keeps the ones done, and a process still serving gets its writes
 * in between.
 */
export function sqliteMigrationTarget(db: Database.Database): MigrationTarget {
  // Migration 5 indexes existing messages: their normalized text is made by the same function
  // as at write time, since SQLite has no NFKC of its own.
  db.function('search_text', { deterministic: true }, (content) => searchText(String(content)));
  return {
    withLock: (work) => work(),
    appliedVersions() {
      db.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
      );
      return db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[];
    },
    apply(migration) {
      const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').pluck();
      const record = db.prepare(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
      );
      db.transaction(() => {
        if (applied.get(migration.version) !== undefined) return;
        db.exec(migration.sql);
        record.run(migration.version, migration.name, new Date().toISOString());
      }).immediate();
    },
  };
}

export const sqliteMigrations: readonly Migration[] = [
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
  {
    version: 2,
    name: 'messages clustered by id (WITHOUT ROWID)',
    // A read by id, and a history page, then walk one B-tree instead of the id index plus
    // the table: on 1M stored messages a random get costs 5.4 instead of 6.7 µs and a
    // page of 50 costs 59 instead of 71 µs (as at 10k), measured. Ids are UUIDv7, so new
    // rows still go at the end of the tree.
    sql: `
      CREATE TABLE messages_by_id (
        id         TEXT PRIMARY KEY,
        room       TEXT NOT NULL,
        author     TEXT NOT NULL,
        content    TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version    INTEGER NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO messages_by_id (id, room, author, content, created_at, updated_at, version)
        SELECT id, room, author, content, created_at, updated_at, version FROM messages ORDER BY id;
      DROP TABLE messages;
      ALTER TABLE messages_by_id RENAME TO messages;
      CREATE INDEX messages_room_id ON messages (room, id);
    `,
  },
  {
    version: 3,
    name: "each message's JSON text stored with the row",
    // A list sends each message's stored JSON as it is: turning 51 rows into objects and back
    // into JSON was most of a history page's CPU time. json_object() writes exactly the bytes
    // of messageJson() (JSON.stringify) for every text the message rules allow (tested).
    sql: `
      ALTER TABLE messages ADD COLUMN body TEXT NOT NULL DEFAULT '';
      UPDATE messages SET body = json_object('id', id, 'room', room, 'author', author,
        'content', content, 'createdAt', created_at, 'updatedAt', updated_at, 'version', version);
    `,
  },
  {
    version: 4,
    name: 'rooms, memberships, read markers; changes of every kind',
    // Every room that holds messages, and `general`, becomes a public room with no owner,
    // created when its oldest message was. BINARY collation is UTF-8 byte order: code point
    // order, as on PostgreSQL's "C". A change's data is the event's JSON text, whatever its kind.
    sql: `
      CREATE TABLE rooms (
        name       TEXT PRIMARY KEY,
        visibility TEXT NOT NULL CHECK (visibility IN ('public', 'private')),
        topic      TEXT NOT NULL,
        created_by TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version    INTEGER NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
        SELECT room, 'public', '', NULL, MIN(created_at), MIN(created_at), 1 FROM messages GROUP BY room;
      INSERT OR IGNORE INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
        VALUES ('general', 'public', '', NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 1);

      CREATE TABLE memberships (
        room      TEXT NOT NULL,
        subject   TEXT NOT NULL,
        role      TEXT NOT NULL CHECK (role IN ('member', 'owner')),
        joined_at TEXT NOT NULL,
        PRIMARY KEY (room, subject)
      ) WITHOUT ROWID;
      CREATE INDEX memberships_subject_room ON memberships (subject, room);

      CREATE TABLE read_markers (
        room      TEXT NOT NULL,
        subject   TEXT NOT NULL,
        last_read TEXT,
        version   INTEGER NOT NULL,
        PRIMARY KEY (room, subject)
      ) WITHOUT ROWID;

      -- The author in the room index: an unread count (others' messages after a marker, up to
      -- 100 per room, 200 rooms in a room list) then reads the index alone, not each message.
      DROP INDEX messages_room_id;
      CREATE INDEX messages_room_id ON messages (room, id, author);

      ALTER TABLE changes RENAME COLUMN message TO data;
      ALTER TABLE changes ADD COLUMN subject TEXT;
      ALTER TABLE changes ADD COLUMN made_private INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 5,
    name: 'search: normalized content and its trigram index',
    // search_text is the content as search-text.ts normalizes it, written with the row. FTS5
    // needs an integer key and messages have none (WITHOUT ROWID): search_rowid is one, unique,
    // handed out as max + 1. The index is contentless (the text is in messages already) and
    // kept in step by triggers, in the transaction of each create, edit and delete. Trigrams
    // are taken as they are: the text is lowercased already, and any folding of the tokenizer
    // would only widen a match that instr() narrows again. detail=none keeps no positions: a
    // term is asked as all of its trigrams (a superset, that instr() narrows too), and the
    // index is 2.5 times smaller and cheaper to write than with positions (measured).
    sql: `
      ALTER TABLE messages ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
      ALTER TABLE messages ADD COLUMN search_rowid INTEGER;
      UPDATE messages SET search_text = search_text(content), search_rowid = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM messages) AS numbered
        WHERE numbered.id = messages.id;
      CREATE UNIQUE INDEX messages_search_rowid ON messages (search_rowid);

      CREATE VIRTUAL TABLE message_search USING fts5(
        text, content = '', contentless_delete = 1, detail = none,
        tokenize = 'trigram case_sensitive 1'
      );
      INSERT INTO message_search (rowid, text) SELECT search_rowid, search_text FROM messages;

      CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
        INSERT INTO message_search (rowid, text) VALUES (new.search_rowid, new.search_text);
      END;
      CREATE TRIGGER messages_search_update AFTER UPDATE OF search_text ON messages
        WHEN old.search_text IS NOT new.search_text BEGIN
        DELETE FROM message_search WHERE rowid = old.search_rowid;
        INSERT INTO message_search (rowid, text) VALUES (new.search_rowid, new.search_text);
      END;
      CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
        DELETE FROM message_search WHERE rowid = old.search_rowid;
      END;
    `,
  },
  {
    version: 6,
    name: 'search: the trigram index written by the store at commit, not by triggers',
    // A trigger writes FTS5 inside each write's savepoint, and FTS5 flushes its pending terms
    // as a new segment at every savepoint that follows: once per create in a group commit.
    // The store now writes the index itself at the end of the transaction (search-index.ts),
    // once per batch: a durable create cost about 40 µs less (measured). The index is unchanged.
    sql: `
      DROP TRIGGER messages_search_insert;
      DROP TRIGGER messages_search_update;
      DROP TRIGGER messages_search_delete;
    `,
  },
  {
    version: 7,
    name: 'replies and revisions',
    // replyTo joins each stored JSON text (and each message change's) as its last field, null
    // for every message so far: the text's closing brace is replaced, which keeps every other
    // byte. `,"replyTo":` can only be that key (a quote inside a value is escaped), so a text
    // that has it already is left as it is. The partial index holds replies only: a thread is
    // one range of it, and the many messages that answer nothing cost it nothing.
    // Revisions keep the versions of edited messages from their first edit on (the version it
    // replaces too); a message never edited answers its one version from its own row, so the
    // upgrade writes no revision.
    sql: `
      ALTER TABLE messages ADD COLUMN reply_to TEXT;
      CREATE INDEX messages_reply_to_id ON messages (reply_to, id) WHERE reply_to IS NOT NULL;
      UPDATE messages SET body = substr(body, 1, length(body) - 1) || ',"replyTo":null}'
        WHERE instr(body, ',"replyTo":') = 0;
      UPDATE changes SET data = substr(data, 1, length(data) - 1) || ',"replyTo":null}'
        WHERE kind IN ('message.created', 'message.updated', 'message.deleted')
          AND instr(data, ',"replyTo":') = 0;

      CREATE TABLE message_revisions (
        message_id TEXT NOT NULL,
        version    INTEGER NOT NULL,
        content    TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        edited_by  TEXT,
        PRIMARY KEY (message_id, version)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 8,
    name: 'reactions',
    // One row per (message, emoji, subject). position is the reaction's place among the
    // message's reactions, max + 1 within the message (one writer): the order they were made,
    // also for two made in the same millisecond. The (message, emoji, position) index holds
    // the key too (WITHOUT ROWID): a summary groups a message's reactions by emoji in index
    // order, and an emoji's reactors are walked in the order they were made, from the index
    // alone. The room is kept with each reaction: its change names it without a message read.
    sql: `
      CREATE TABLE reactions (
        message_id TEXT NOT NULL,
        emoji      TEXT NOT NULL,
        subject    TEXT NOT NULL,
        room       TEXT NOT NULL,
        created_at TEXT NOT NULL,
        position   INTEGER NOT NULL,
        PRIMARY KEY (message_id, emoji, subject)
      ) WITHOUT ROWID;
      CREATE INDEX reactions_message_emoji_position ON reactions (message_id, emoji, position);
    `,
  },
  {
    version: 9,
    name: 'search: the trigram index merges its segments 16 at a time',
    // Each group commit writes its creates' entries as one small segment. FTS5 merges them
    // into larger ones as it goes: a step of merging per 64 pages written, on the level with
    // the most segments once it holds `automerge` of them (4 by default), and at once, in the
    // commit that finds it, when level 0 holds `crisismerge` (16). An entry is written again
    // at each level it climbs: merging 16 at a time makes about half as many levels, and
    // crisismerge 64 keeps the merging in steps. The price is more segments for a search to
    // consult. Measured by bench/fts-merge.ts (its output in bench/results/fts-merge-*.txt).
    sql: `
      INSERT INTO message_search (message_search, rank) VALUES ('automerge', 16);
      INSERT INTO message_search (message_search, rank) VALUES ('crisismerge', 64);
    `,
  },
  {
    version: 10,
    name: "a room's pages read from the room index alone: it holds each message's JSON",
    // A room's rows lie scattered in the id-ordered table, whose interior pages hold whole rows
    // (WITHOUT ROWID, rows of about 650 bytes): each row of a room's page was a descent of some
    // 8 levels, 51 of them a page. With the JSON in the index, a page is one descent and a walk
    // of its leaves: a room's page statement 128-140 µs before, 38-56 after (in process, 1M
    // messages); half the CPU for a room's page in the server (docs/performance.md). The price
    // is paid at each create and edit (12 µs more a durable create in the server), by unread
    // counts and room searches, which walk wider entries, and on disk (the index holds a second
    // copy of each message's JSON: a third more file).
    sql: `
      DROP INDEX messages_room_id;
      CREATE INDEX messages_room_id ON messages (room, id, author, body);
    `,
  },
];
