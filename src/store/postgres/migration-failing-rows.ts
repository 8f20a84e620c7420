/**
 * PostgreSQL migration 11: create_messages judges the room access rule after
 * the batch's rooms are made, and names the rows that fail (in a file of its
 * own: migrations.ts is long enough).
 */
import type { PostgresMigration } from './migrations.ts';

export const failingRowsNamed: PostgresMigration = {
  version: 11,
  name: 'create_messages: access judged once the rooms are made; failing rows named',
  // Version 10 judged access before making the batch's new rooms. A room another transaction
  // was making private at that moment did not exist yet, so it passed as "about to be made,
  // public"; the insert then waited for that transaction and did nothing, and the message went
  // into a private room its author may not read. The rule is now judged after the insert, in a
  // statement whose snapshot holds the room as it was committed.
  // A row's failure (MS001, MS002, MS003) now says, in DETAIL, the places in the batch (from 1,
  // comma-separated) of every row that fails that rule: the store fails those and commits the
  // rest as one batch, instead of retrying every row alone (one transaction and flush each,
  // while later creates wait). Rows failing two rules fail on the first (403 before 400).
  sql: `
      DROP FUNCTION create_messages(uuid[], text[], text[], text[], timestamptz[], text[], text[],
        text[], text[], text[], text[], text[], uuid[], text[]);
      CREATE FUNCTION create_messages(
        p_ids uuid[], p_rooms text[], p_authors text[], p_contents text[], p_ats timestamptz[],
        p_messages text[], p_room_data text[], p_member_data text[],
        p_scopes text[], p_keys text[], p_tokens text[], p_search_texts text[], p_reply_tos uuid[],
        p_readers text[]
      ) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_wanted integer;
        v_held integer;
        v_failing text;
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
            -- Tokens are one per claim: a claim this batch holds is 'done' with its token now.
            SELECT string_agg(c.n::text, ',' ORDER BY c.n) INTO v_failing
              FROM unnest(p_scopes, p_keys, p_tokens) WITH ORDINALITY AS c(scope, key, token, n)
              WHERE c.key IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM idempotency_keys i WHERE i.scope = c.scope AND i.key = c.key
                  AND i.token = c.token AND i.state = 'done');
            RAISE EXCEPTION 'an Idempotency-Key claim is no longer held'
              USING ERRCODE = 'MS001', DETAIL = coalesce(v_failing, '');
          END IF;
        END IF;
        -- The first create of each room in the batch creates it when it is not a room yet;
        -- v_created: the places in the batch of those that did. A room another transaction is
        -- making is waited for (the insert's conflict), and then left as that one made it.
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
        -- The access rule again, at commit: a row whose reader may not read its room then
        -- (private, not a member) fails (MS003). Every room of the batch exists by now. They are
        -- locked (FOR KEY SHARE, by name, before the change log's lock): a membership removal or
        -- a turn to private (which lock the room FOR UPDATE) under way is waited for, and a later
        -- one waits for this commit. The facts are read in a statement after the locks, whose
        -- snapshot holds what was waited for. Judged before the reply's rule, as the contract
        -- orders a 403 before a 400 (and SQLite does).
        -- (A plain expression, no query: a batch without readers, auth off, pays next to nothing.)
        IF cardinality(array_remove(p_readers, NULL)) > 0 THEN
          PERFORM 1 FROM rooms
            WHERE name IN (SELECT b.room FROM unnest(p_rooms, p_readers) AS b(room, reader)
              WHERE b.reader IS NOT NULL)
            ORDER BY name FOR KEY SHARE;
          SELECT string_agg(b.n::text, ',' ORDER BY b.n) INTO v_failing
            FROM unnest(p_rooms, p_readers) WITH ORDINALITY AS b(room, reader, n)
              JOIN rooms r ON r.name = b.room
            WHERE b.reader IS NOT NULL AND r.visibility = 'private' AND NOT EXISTS (
              SELECT 1 FROM memberships ms WHERE ms.room = b.room AND ms.subject = b.reader);
          IF v_failing IS NOT NULL THEN
            RAISE EXCEPTION 'a room is private to its reader'
              USING ERRCODE = 'MS003', DETAIL = v_failing;
          END IF;
        END IF;
        -- A reply's message must be stored, in the reply's room. Locked first (KEY SHARE), so a
        -- delete of it under way is waited for and then seen; a delete that comes later waits for
        -- this commit.
        IF EXISTS (SELECT 1 FROM unnest(p_reply_tos) AS r(id) WHERE r.id IS NOT NULL) THEN
          PERFORM 1 FROM messages
            WHERE id IN (SELECT r.id FROM unnest(p_reply_tos) AS r(id) WHERE r.id IS NOT NULL)
            ORDER BY id FOR KEY SHARE;
          SELECT string_agg(b.n::text, ',' ORDER BY b.n) INTO v_failing
            FROM unnest(p_reply_tos, p_rooms) WITH ORDINALITY AS b(reply_to, room, n)
            WHERE b.reply_to IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM messages p WHERE p.id = b.reply_to AND p.room = b.room);
          IF v_failing IS NOT NULL THEN
            RAISE EXCEPTION 'replyTo is not a message of the room'
              USING ERRCODE = 'MS002', DETAIL = v_failing;
          END IF;
        END IF;
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
};
