/**
 * Versioned schema of the PostgreSQL store. Append only: a released migration
 * never changes. Run by the domain's runner (migration-runner.ts) through
 * postgresMigrationTarget.
 *
 * Change sequence numbers must become visible in the order they are handed
 * out, or a reader that has seen 42 could later find 41 commit. Every write
 * therefore takes a transaction-level advisory lock (per schema) right before
 * it appends its change: the lock is held until commit, so the next writer
 * draws its number only after the previous one is visible.
 */
import type pg from 'pg';
import type { Migration, MigrationTarget } from '../../domain/migration-runner.ts';
import { accessAtCommit } from './migration-access.ts';
import { failingRowsNamed } from './migration-failing-rows.ts';
import { fillSearchText } from './search.ts';

/** A migration that may also run code of the store's: before its SQL, in its transaction. */
export interface PostgresMigration extends Migration {
  readonly before?: (client: pg.ClientBase) => Promise<void>;
}

/**
 * Migrations on one connection: a session-level advisory lock (instances
 * that start together wait, then find nothing left to do), the schema and
 * the record table made on demand, each migration in its own transaction.
 */
export function postgresMigrationTarget(
  client: pg.ClientBase,
  schema: string | null,
): MigrationTarget<PostgresMigration> {
  return {
    async withLock(work) {
      // One lock per schema: stores in other schemas of the database migrate at the same time.
      const lock = [`message-service.migrations:${schema ?? 'public'}`];
      await client.query('SELECT pg_advisory_lock(hashtext($1))', lock);
      try {
        await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', lock);
      }
    },
    async appliedVersions() {
      if (schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number }>(
        'SELECT version FROM schema_migrations',
      );
      return rows.map((r) => r.version);
    },
    async apply(migration) {
      await client.query('BEGIN');
      try {
        await migration.before?.(client);
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    },
  };
}

export const postgresMigrations: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'messages, change log, idempotency keys',
    sql: `
      CREATE TABLE messages (
        id         uuid PRIMARY KEY,
        room       text NOT NULL,
        author     text NOT NULL,
        content    text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version    integer NOT NULL
      );
      CREATE INDEX messages_room_id ON messages (room, id);

      CREATE TABLE changes (
        seq        bigserial PRIMARY KEY,
        kind       text NOT NULL,
        room       text NOT NULL,
        message    text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE change_log_meta (
        id             integer PRIMARY KEY CHECK (id = 1),
        purged_through bigint NOT NULL
      );
      INSERT INTO change_log_meta (id, purged_through) VALUES (1, 0);

      CREATE TABLE idempotency_keys (
        scope        text NOT NULL,
        key          text NOT NULL,
        request_hash text NOT NULL,
        token        text NOT NULL,
        state        text NOT NULL CHECK (state IN ('pending', 'done')),
        status       integer,
        response     text,
        claimed_at   timestamptz NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotency_keys_claimed_at ON idempotency_keys (claimed_at);

      -- Appends one change in commit order and wakes the listeners of this schema.
      CREATE FUNCTION append_change(p_kind text, p_room text, p_message text) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v_seq bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.changes'));
        INSERT INTO changes (kind, room, message) VALUES (p_kind, p_room, p_message)
          RETURNING seq INTO v_seq;
        PERFORM pg_notify('message_changes', current_schema() || ':' || v_seq);
        RETURN v_seq;
      END $$;

      -- A whole create in one round trip: the message, its change, and the idempotent outcome.
      CREATE FUNCTION create_message(
        p_id uuid, p_room text, p_author text, p_content text, p_at timestamptz, p_message text,
        p_scope text, p_key text, p_token text
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO messages (id, room, author, content, created_at, updated_at, version)
          VALUES (p_id, p_room, p_author, p_content, p_at, p_at, 1);
        PERFORM append_change('message.created', p_room, p_message);
        IF p_key IS NOT NULL THEN
          UPDATE idempotency_keys SET state = 'done', status = 201, response = p_message
            WHERE scope = p_scope AND key = p_key AND token = p_token;
        END IF;
      END $$;
    `,
  },
  {
    version: 2,
    name: 'a create commits only while its Idempotency-Key claim is held',
    // A create that timed out on the client side may still commit on the server later, after
    // its request answered 503 and freed the claim: the retry would then store the message a
    // second time. Completing the claim first (and failing when it is gone) makes that late
    // create roll back instead. serialization_failure is a 503: the client retries.
    sql: `
      CREATE OR REPLACE FUNCTION create_message(
        p_id uuid, p_room text, p_author text, p_content text, p_at timestamptz, p_message text,
        p_scope text, p_key text, p_token text
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      BEGIN
        IF p_key IS NOT NULL THEN
          UPDATE idempotency_keys SET state = 'done', status = 201, response = p_message
            WHERE scope = p_scope AND key = p_key AND token = p_token AND state = 'pending';
          IF NOT FOUND THEN
            RAISE EXCEPTION 'the Idempotency-Key claim is no longer held'
              USING ERRCODE = 'serialization_failure';
          END IF;
        END IF;
        INSERT INTO messages (id, room, author, content, created_at, updated_at, version)
          VALUES (p_id, p_room, p_author, p_content, p_at, p_at, 1);
        PERFORM append_change('message.created', p_room, p_message);
      END $$;
    `,
  },
  {
    version: 3,
    name: 'create_messages: a batch of creates in one call (group commit)',
    // All or nothing: the store retries a failed batch row by row, so a row that fails
    // fails only its own request (see create-batcher.ts).
    sql: `
      CREATE FUNCTION create_messages(
        p_ids uuid[], p_rooms text[], p_authors text[], p_contents text[], p_ats timestamptz[],
        p_messages text[], p_scopes text[], p_keys text[], p_tokens text[]
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      BEGIN
        FOR i IN 1 .. cardinality(p_ids) LOOP
          PERFORM create_message(p_ids[i], p_rooms[i], p_authors[i], p_contents[i], p_ats[i],
            p_messages[i], p_scopes[i], p_keys[i], p_tokens[i]);
        END LOOP;
      END $$;
    `,
  },
  {
    version: 4,
    name: "each message's JSON text stored with the row; set-based batch creates",
    // body: a list sends each message's stored JSON as it is (turning rows into objects and
    // back into JSON was most of a history page's CPU time). The expression below writes
    // exactly the bytes of messageJson() (JSON.stringify) for every text the rules allow.
    //
    // create_messages: one INSERT for the messages, then the change log's lock, one INSERT for
    // the changes (numbered in the batch's order) and one NOTIFY, instead of a loop of
    // create_message(): less database CPU per create, and the lock is held only for the
    // change insert and the commit. It is the only create function: a create alone is a
    // batch of one. A claim that is no longer held fails with SQLSTATE MS001
    // (not serialization_failure, which is the database's own), and the batch is retried row
    // by row so that only its own request fails.
    sql: `
      ALTER TABLE messages ADD COLUMN body text;
      UPDATE messages SET body = '{"id":"' || id::text || '","room":' || to_json(room)::text
        || ',"author":' || to_json(author)::text || ',"content":' || to_json(content)::text
        || ',"createdAt":"' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        || '","updatedAt":"' || to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        || '","version":' || version || '}';
      ALTER TABLE messages ALTER COLUMN body SET NOT NULL;

      -- Every create goes through create_messages now (one alone is a batch of one).
      DROP FUNCTION create_message(uuid, text, text, text, timestamptz, text, text, text, text);

      CREATE OR REPLACE FUNCTION create_messages(
        p_ids uuid[], p_rooms text[], p_authors text[], p_contents text[], p_ats timestamptz[],
        p_messages text[], p_scopes text[], p_keys text[], p_tokens text[]
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_wanted integer;
        v_held integer;
        v_last bigint;
      BEGIN
        SELECT count(*) INTO v_wanted FROM unnest(p_keys) AS k WHERE k IS NOT NULL;
        IF v_wanted > 0 THEN
          UPDATE idempotency_keys AS i SET state = 'done', status = 201, response = c.message
            FROM unnest(p_scopes, p_keys, p_tokens, p_messages) AS c(scope, key, token, message)
            WHERE c.key IS NOT NULL AND i.scope = c.scope AND i.key = c.key
              AND i.token = c.token AND i.state = 'pending';
          GET DIAGNOSTICS v_held = ROW_COUNT;
          IF v_held <> v_wanted THEN
            RAISE EXCEPTION 'an Idempotency-Key claim is no longer held' USING ERRCODE = 'MS001';
          END IF;
        END IF;
        INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body)
          SELECT id, room, author, content, at, at, 1, message
          FROM unnest(p_ids, p_rooms, p_authors, p_contents, p_ats, p_messages)
            AS m(id, room, author, content, at, message);
        PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.changes'));
        WITH added AS (
          INSERT INTO changes (kind, room, message)
            SELECT 'message.created', room, message
            FROM unnest(p_rooms, p_messages) WITH ORDINALITY AS c(room, message, n)
            ORDER BY n
          RETURNING seq
        )
        SELECT max(seq) INTO v_last FROM added;
        PERFORM pg_notify('message_changes', current_schema() || ':' || v_last);
      END $$;
    `,
  },
  {
    version: 5,
    name: 'rooms, memberships and read markers; every change kind in the change log',
    // messages.room takes the rooms' collation ("C", code point order): a comparison of a
    // default-collation column with a "C" one resolves to "C", and the (room, id) index, built
    // for another collation, then only filters instead of seeking (measured). Only the index is
    // rebuilt, the table is not rewritten.
    //
    // Rooms of existing messages (and general) become public rooms without an owner, created
    // when their oldest message was; no change is appended for them (they were there before).
    //
    // create_messages creates a room posted to for the first time, in the create's own
    // transaction: INSERT ... ON CONFLICT DO NOTHING, so of two instances creating the same room
    // only the one whose row went in appends room.created (the other waits for its commit, then
    // finds the room). Rooms are inserted in name order and the change log's lock is taken
    // last, as by every write, so no two writes wait on each other in a cycle. The room's and
    // membership's JSON texts come from the caller (room-changes.ts), one per row.
    sql: `
      -- The author beside the room index: an unread count (others' messages after a marker, up
      -- to 100 per room, 200 rooms in a room list) can then be an index-only scan. Dropped
      -- first: the collation change would rebuild it once more for nothing.
      DROP INDEX messages_room_id;
      ALTER TABLE messages ALTER COLUMN room TYPE text COLLATE "C";
      CREATE INDEX messages_room_id ON messages (room, id) INCLUDE (author);

      CREATE TABLE rooms (
        name       text COLLATE "C" PRIMARY KEY,
        visibility text NOT NULL CHECK (visibility IN ('public', 'private')),
        topic      text NOT NULL,
        created_by text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version    integer NOT NULL
      );
      -- The private rooms: the readable list condition hashes them once per list, and the
      -- change feed's access snapshot reads them.
      CREATE INDEX rooms_private ON rooms (name) WHERE visibility = 'private';
      CREATE TABLE memberships (
        room      text COLLATE "C" NOT NULL,
        subject   text COLLATE "C" NOT NULL,
        role      text NOT NULL CHECK (role IN ('member', 'owner')),
        joined_at timestamptz NOT NULL,
        PRIMARY KEY (room, subject)
      );
      -- A subject's rooms (roomsOf), and the readable condition's membership lookups.
      CREATE INDEX memberships_subject_room ON memberships (subject, room);
      CREATE TABLE read_markers (
        room      text COLLATE "C" NOT NULL,
        subject   text COLLATE "C" NOT NULL,
        last_read uuid,
        version   integer NOT NULL,
        PRIMARY KEY (room, subject)
      );

      INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
        SELECT room, 'public', '', NULL, min(created_at), min(created_at), 1
        FROM messages GROUP BY room;
      INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
        VALUES ('general', 'public', '', NULL, date_trunc('milliseconds', now()),
          date_trunc('milliseconds', now()), 1)
        ON CONFLICT (name) DO NOTHING;

      -- Existing changes are all message changes: their data is the message's JSON already.
      ALTER TABLE changes RENAME COLUMN message TO data;
      ALTER TABLE changes ADD COLUMN subject text;
      ALTER TABLE changes ADD COLUMN made_private boolean NOT NULL DEFAULT false;

      DROP FUNCTION append_change(text, text, text);
      -- Appends one change in commit order and wakes the listeners of this schema.
      CREATE FUNCTION append_change(
        p_kind text, p_room text, p_data text, p_subject text, p_made_private boolean
      ) RETURNS bigint
      LANGUAGE plpgsql AS $$
      DECLARE
        v_seq bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.changes'));
        INSERT INTO changes (kind, room, data, subject, made_private)
          VALUES (p_kind, p_room, p_data, p_subject, p_made_private)
          RETURNING seq INTO v_seq;
        PERFORM pg_notify('message_changes', current_schema() || ':' || v_seq);
        RETURN v_seq;
      END $$;

      DROP FUNCTION create_messages(
        uuid[], text[], text[], text[], timestamptz[], text[], text[], text[], text[]);
      CREATE FUNCTION create_messages(
        p_ids uuid[], p_rooms text[], p_authors text[], p_contents text[], p_ats timestamptz[],
        p_messages text[], p_room_data text[], p_member_data text[],
        p_scopes text[], p_keys text[], p_tokens text[]
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_wanted integer;
        v_held integer;
        v_created bigint[];
        v_last bigint;
      BEGIN
        SELECT count(*) INTO v_wanted FROM unnest(p_keys) AS k WHERE k IS NOT NULL;
        IF v_wanted > 0 THEN
          UPDATE idempotency_keys AS i SET state = 'done', status = 201, response = c.message
            FROM unnest(p_scopes, p_keys, p_tokens, p_messages) AS c(scope, key, token, message)
            WHERE c.key IS NOT NULL AND i.scope = c.scope AND i.key = c.key
              AND i.token = c.token AND i.state = 'pending';
          GET DIAGNOSTICS v_held = ROW_COUNT;
          IF v_held <> v_wanted THEN
            RAISE EXCEPTION 'an Idempotency-Key claim is no longer held' USING ERRCODE = 'MS001';
          END IF;
        END IF;
        -- The first create of each room in the batch creates it when it is not a room yet;
        -- v_created: the places in the batch of those that did.
        -- (A create whose room the caller knows to exist sends no room data: rooms are never
        -- deleted, so it need not try.)
        WITH firsts AS (
          SELECT DISTINCT ON (room) room, author, at, n
          FROM unnest(p_rooms, p_authors, p_ats, p_room_data)
            WITH ORDINALITY AS b(room, author, at, room_data, n)
          WHERE room_data IS NOT NULL
          ORDER BY room, n
        ), new_rooms AS (
          INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
            SELECT room, 'public', '', author, at, at, 1 FROM firsts ORDER BY room
            ON CONFLICT (name) DO NOTHING
          RETURNING name
        ), owners AS (
          INSERT INTO memberships (room, subject, role, joined_at)
            SELECT f.room, f.author, 'owner', f.at FROM firsts f JOIN new_rooms r ON r.name = f.room
          RETURNING room
        )
        SELECT array_agg(f.n) INTO v_created FROM firsts f JOIN owners o ON o.room = f.room;
        INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body)
          SELECT id, room, author, content, at, at, 1, message
          FROM unnest(p_ids, p_rooms, p_authors, p_contents, p_ats, p_messages)
            AS m(id, room, author, content, at, message);
        PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.changes'));
        WITH added AS (
          INSERT INTO changes (kind, room, data, subject)
            SELECT k.kind, b.room, k.data, k.subject
            FROM unnest(p_rooms, p_authors, p_messages, p_room_data, p_member_data)
                WITH ORDINALITY AS b(room, author, message, room_data, member_data, n)
              CROSS JOIN LATERAL (VALUES
                (1, 'room.created', b.room_data, NULL::text),
                (2, 'member.added', b.member_data, b.author),
                (3, 'message.created', b.message, NULL::text)
              ) AS k(o, kind, data, subject)
            WHERE k.o = 3 OR b.n = ANY(v_created)
            ORDER BY b.n, k.o
          RETURNING seq
        )
        SELECT max(seq) INTO v_last FROM added;
        PERFORM pg_notify('message_changes', current_schema() || ':' || v_last);
      END $$;
    `,
  },
  {
    version: 6,
    name: 'search: normalized content and its trigram index',
    // search_text is the content as search-text.ts normalizes it, written with the row (lower()
    // here would follow the database's locale, not the rule). Rows stored before this
    // migration get it from migration 7 (until then the store filled them at each start),
    // found by a partial index that stays empty once they have it.
    // pg_trgm lives in public: an extension is one per database, and a schema dropped with
    // CASCADE must not take it (and every other schema's index) along.
    sql: `
      -- Schemas migrate concurrently (one lock per schema): two first CREATE EXTENSIONs would
      -- collide, so they take turns, and the second finds the extension there.
      SELECT pg_advisory_xact_lock(hashtext('message-service.pg_trgm'));
      CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
      ALTER TABLE messages ADD COLUMN search_text text;
      CREATE INDEX messages_search_text ON messages USING gin (search_text public.gin_trgm_ops);
      CREATE INDEX messages_search_text_missing ON messages (id) WHERE search_text IS NULL;

      DROP FUNCTION create_messages(
        uuid[], text[], text[], text[], timestamptz[], text[], text[], text[], text[], text[], text[]);
      CREATE FUNCTION create_messages(
        p_ids uuid[], p_rooms text[], p_authors text[], p_contents text[], p_ats timestamptz[],
        p_messages text[], p_room_data text[], p_member_data text[],
        p_scopes text[], p_keys text[], p_tokens text[], p_search_texts text[]
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_wanted integer;
        v_held integer;
        v_created bigint[];
        v_last bigint;
      BEGIN
        SELECT count(*) INTO v_wanted FROM unnest(p_keys) AS k WHERE k IS NOT NULL;
        IF v_wanted > 0 THEN
          UPDATE idempotency_keys AS i SET state = 'done', status = 201, response = c.message
            FROM unnest(p_scopes, p_keys, p_tokens, p_messages) AS c(scope, key, token, message)
            WHERE c.key IS NOT NULL AND i.scope = c.scope AND i.key = c.key
              AND i.token = c.token AND i.state = 'pending';
          GET DIAGNOSTICS v_held = ROW_COUNT;
          IF v_held <> v_wanted THEN
            RAISE EXCEPTION 'an Idempotency-Key claim is no longer held' USING ERRCODE = 'MS001';
          END IF;
        END IF;
        -- The first create of each room in the batch creates it when it is not a room yet;
        -- v_created: the places in the batch of those that did.
        -- (A create whose room the caller knows to exist sends no room data: rooms are never
        -- deleted, so it need not try.)
        WITH firsts AS (
          SELECT DISTINCT ON (room) room, author, at, n
          FROM unnest(p_rooms, p_authors, p_ats, p_room_data)
            WITH ORDINALITY AS b(room, author, at, room_data, n)
          WHERE room_data IS NOT NULL
          ORDER BY room, n
        ), new_rooms AS (
          INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
            SELECT room, 'public', '', author, at, at, 1 FROM firsts ORDER BY room
            ON CONFLICT (name) DO NOTHING
          RETURNING name
        ), owners AS (
          INSERT INTO memberships (room, subject, role, joined_at)
            SELECT f.room, f.author, 'owner', f.at FROM firsts f JOIN new_rooms r ON r.name = f.room
          RETURNING room
        )
        SELECT array_agg(f.n) INTO v_created FROM firsts f JOIN owners o ON o.room = f.room;
        INSERT INTO messages
            (id, room, author, content, created_at, updated_at, version, body, search_text)
          SELECT id, room, author, content, at, at, 1, message, search_text
          FROM unnest(p_ids, p_rooms, p_authors, p_contents, p_ats, p_messages, p_search_texts)
            AS m(id, room, author, content, at, message, search_text);
        PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.changes'));
        WITH added AS (
          INSERT INTO changes (kind, room, data, subject)
            SELECT k.kind, b.room, k.data, k.subject
            FROM unnest(p_rooms, p_authors, p_messages, p_room_data, p_member_data)
                WITH ORDINALITY AS b(room, author, message, room_data, member_data, n)
              CROSS JOIN LATERAL (VALUES
                (1, 'room.created', b.room_data, NULL::text),
                (2, 'member.added', b.member_data, b.author),
                (3, 'message.created', b.message, NULL::text)
              ) AS k(o, kind, data, subject)
            WHERE k.o = 3 OR b.n = ANY(v_created)
            ORDER BY b.n, k.o
          RETURNING seq
        )
        SELECT max(seq) INTO v_last FROM added;
        PERFORM pg_notify('message_changes', current_schema() || ':' || v_last);
      END $$;
    `,
  },
  {
    version: 7,
    name: 'search: the normalized text of older messages filled by the upgrade itself',
    // Until now the store filled search_text after migrating, at every start (a query each
    // time, and a whole table at the start after the upgrade, before the store was ready).
    // The fill is this migration's now (fillSearchText, run in its transaction, before the
    // SQL): a start does no search work, and every row holds its text from here on.
    before: fillSearchText,
    sql: `
      DROP INDEX messages_search_text_missing;
      ALTER TABLE messages ALTER COLUMN search_text SET NOT NULL;
    `,
  },
  {
    version: 8,
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
      ALTER TABLE messages ADD COLUMN reply_to uuid;
      CREATE INDEX messages_reply_to_id ON messages (reply_to, id) WHERE reply_to IS NOT NULL;
      UPDATE messages SET body = left(body, -1) || ',"replyTo":null}'
        WHERE strpos(body, ',"replyTo":') = 0;
      UPDATE changes SET data = left(data, -1) || ',"replyTo":null}'
        WHERE kind IN ('message.created', 'message.updated', 'message.deleted')
          AND strpos(data, ',"replyTo":') = 0;

      CREATE TABLE message_revisions (
        message_id uuid NOT NULL,
        version    integer NOT NULL,
        content    text NOT NULL,
        updated_at timestamptz NOT NULL,
        edited_by  text,
        PRIMARY KEY (message_id, version)
      );

      DROP FUNCTION create_messages(uuid[], text[], text[], text[], timestamptz[], text[], text[],
        text[], text[], text[], text[], text[]);
      CREATE FUNCTION create_messages(
        p_ids uuid[], p_rooms text[], p_authors text[], p_contents text[], p_ats timestamptz[],
        p_messages text[], p_room_data text[], p_member_data text[],
        p_scopes text[], p_keys text[], p_tokens text[], p_search_texts text[], p_reply_tos uuid[]
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_wanted integer;
        v_held integer;
        v_created bigint[];
        v_last bigint;
      BEGIN
        SELECT count(*) INTO v_wanted FROM unnest(p_keys) AS k WHERE k IS NOT NULL;
        IF v_wanted > 0 THEN
          UPDATE idempotency_keys AS i SET state = 'done', status = 201, response = c.message
            FROM unnest(p_scopes, p_keys, p_tokens, p_messages) AS c(scope, key, token, message)
            WHERE c.key IS NOT NULL AND i.scope = c.scope AND i.key = c.key
              AND i.token = c.token AND i.state = 'pending';
          GET DIAGNOSTICS v_held = ROW_COUNT;
          IF v_held <> v_wanted THEN
            RAISE EXCEPTION 'an Idempotency-Key claim is no longer held' USING ERRCODE = 'MS001';
          END IF;
        END IF;
        -- A reply's message must be stored, in the reply's room. Locked first (KEY SHARE), so a
        -- delete of it under way is waited for and then seen; a delete that comes later waits for
        -- this commit. A failure is a row's (MS002): the batch is retried row by row.
        IF EXISTS (SELECT 1 FROM unnest(p_reply_tos) AS r(id) WHERE r.id IS NOT NULL) THEN
          PERFORM 1 FROM messages
            WHERE id IN (SELECT r.id FROM unnest(p_reply_tos) AS r(id) WHERE r.id IS NOT NULL)
            ORDER BY id FOR KEY SHARE;
          IF EXISTS (
            SELECT 1 FROM unnest(p_reply_tos, p_rooms) AS b(reply_to, room)
            WHERE b.reply_to IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM messages p WHERE p.id = b.reply_to AND p.room = b.room)
          ) THEN
            RAISE EXCEPTION 'replyTo is not a message of the room' USING ERRCODE = 'MS002';
          END IF;
        END IF;
        -- The first create of each room in the batch creates it when it is not a room yet;
        -- v_created: the places in the batch of those that did.
        -- (A create whose room the caller knows to exist sends no room data: rooms are never
        -- deleted, so it need not try.)
        WITH firsts AS (
          SELECT DISTINCT ON (room) room, author, at, n
          FROM unnest(p_rooms, p_authors, p_ats, p_room_data)
            WITH ORDINALITY AS b(room, author, at, room_data, n)
          WHERE room_data IS NOT NULL
          ORDER BY room, n
        ), new_rooms AS (
          INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
            SELECT room, 'public', '', author, at, at, 1 FROM firsts ORDER BY room
            ON CONFLICT (name) DO NOTHING
          RETURNING name
        ), owners AS (
          INSERT INTO memberships (room, subject, role, joined_at)
            SELECT f.room, f.author, 'owner', f.at FROM firsts f JOIN new_rooms r ON r.name = f.room
          RETURNING room
        )
        SELECT array_agg(f.n) INTO v_created FROM firsts f JOIN owners o ON o.room = f.room;
        INSERT INTO messages
            (id, room, author, content, created_at, updated_at, version, body, search_text, reply_to)
          SELECT id, room, author, content, at, at, 1, message, search_text, reply_to
          FROM unnest(p_ids, p_rooms, p_authors, p_contents, p_ats, p_messages, p_search_texts,
              p_reply_tos)
            AS m(id, room, author, content, at, message, search_text, reply_to);
        PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.changes'));
        WITH added AS (
          INSERT INTO changes (kind, room, data, subject)
            SELECT k.kind, b.room, k.data, k.subject
            FROM unnest(p_rooms, p_authors, p_messages, p_room_data, p_member_data)
                WITH ORDINALITY AS b(room, author, message, room_data, member_data, n)
              CROSS JOIN LATERAL (VALUES
                (1, 'room.created', b.room_data, NULL::text),
                (2, 'member.added', b.member_data, b.author),
                (3, 'message.created', b.message, NULL::text)
              ) AS k(o, kind, data, subject)
            WHERE k.o = 3 OR b.n = ANY(v_created)
            ORDER BY b.n, k.o
          RETURNING seq
        )
        SELECT max(seq) INTO v_last FROM added;
        PERFORM pg_notify('message_changes', current_schema() || ':' || v_last);
      END $$;
    `,
  },
  {
    version: 9,
    name: 'reactions',
    // One row per (message, emoji, subject). position is drawn from its sequence under the
    // message's row lock, which every reaction write of that message takes (reactions.ts): the
    // order they were made. The (message, emoji, position) index includes the subject and
    // createdAt: a summary groups a message's reactions by emoji in index order, an emoji's
    // reactors are walked in the order they were made, index-only. The room is kept with each
    // reaction: its change names it without a message read. No foreign key: a message's delete
    // removes its reactions itself, under the same lock.
    sql: `
      CREATE TABLE reactions (
        message_id uuid NOT NULL,
        emoji      text COLLATE "C" NOT NULL,
        subject    text COLLATE "C" NOT NULL,
        room       text COLLATE "C" NOT NULL,
        created_at timestamptz NOT NULL,
        position   bigserial NOT NULL,
        PRIMARY KEY (message_id, emoji, subject)
      );
      CREATE INDEX reactions_message_emoji_position ON reactions (message_id, emoji, position)
        INCLUDE (subject, created_at);
    `,
  },
  accessAtCommit,
  failingRowsNamed,
];
