/**
 * Every list shape walks an index in the requested order, on both stores:
 * no Sort node (PostgreSQL) or temporary B-tree (SQLite), no scan of the
 * whole table. The tables hold enough rows (60,000 in 12 rooms, analyzed;
 * SQLite's also without statistics, as the service runs it) that a planner
 * would show a sort if the query allowed one: an ORDER BY that
 * bound to a text output column once made every list on PostgreSQL sort all
 * rows after its cursor, which only a plan shows.
 */
import assert from 'node:assert/strict';
import { describe, it, before, after } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { ListQuery } from '../../src/domain/message.ts';
import { listFilter } from '../../src/domain/list-filter.ts';
import { searchQuery } from '../../src/domain/search-text.ts';
import { aroundHalves } from '../../src/domain/around-page.ts';
import {
  aroundBatchSql,
  aroundStatement as postgresAround,
  listBatchSql,
  listStatement as postgresList,
  searchStatement,
} from '../../src/store/postgres/list-sql.ts';
import { searchStatements } from '../../src/store/sqlite/search.ts';
import {
  aroundStatements as sqliteAround,
  listStatement as sqliteList,
} from '../../src/store/sqlite/list-sql.ts';
import { MEMBER_ROOMS as postgresMemberRooms } from '../../src/store/postgres/members.ts';
import { RECENT_MESSAGES as postgresRecent } from '../../src/store/postgres/messages.ts';
import { MEMBER_ROOMS_SQL as sqliteMemberRooms } from '../../src/store/sqlite/members.ts';
import { batchSql as postgresReactionBatch } from '../../src/store/postgres/reactions.ts';
import { batchSql as sqliteReactionBatch } from '../../src/store/sqlite/reactions.ts';
import { RECENT_MESSAGES_SQL as sqliteRecent } from '../../src/store/sqlite/messages.ts';
import { unreadSql as sqliteUnread } from '../../src/store/sqlite/read-markers.ts';
import { postgresEngine, sqliteEngine, type TestDatabase } from '../support/engines.ts';
import { migratedDatabase } from '../support/open-store.ts';
import { PG_BASE_URL, postgresAvailable, skipUnless } from '../support/prerequisites.ts';

const ROWS = 60_000;
const ROOMS = 12;

/** The i-th id of the seeded table: ids sort as i does. */
function idOf(i: number): string {
  return `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
}

type Shape = ListQuery & { readonly limit: number };
/** The index a shape walks: the primary key, the (room, id) key, the (replyTo, id) key, or either of the first two. */
type Index = 'primary' | 'room' | 'reply' | 'either';

/** Every fifth message answers the first of its block of 500: threads of 100 replies. */
const REPLY_EVERY = 5;
const THREAD = 500;

/** Every combination of room, order and bounds, and the id list with and without a room. */
function shapes(): { label: string; query: Shape; index: Index }[] {
  return baseShapes().flatMap((shape) => [
    shape,
    // Only rooms a subject may read (auth on): a condition beside the walk, not a join.
    {
      label: `${shape.label} readable`,
      query: { ...shape.query, readableBy: 'ada' },
      index: shape.index,
    },
  ]);
}

function baseShapes(): { label: string; query: Shape; index: Index }[] {
  const out: { label: string; query: Shape; index: Index }[] = [];
  for (const room of [undefined, 'room-3']) {
    for (const order of ['asc', 'desc'] as const) {
      for (const bounds of ['none', 'after', 'before', 'both'] as const) {
        const query: Shape = {
          order,
          limit: 501,
          ...(room === undefined ? {} : { room }),
          ...(bounds === 'after' || bounds === 'both' ? { after: idOf(20_000) } : {}),
          ...(bounds === 'before' || bounds === 'both' ? { before: idOf(40_000) } : {}),
        };
        out.push({
          label: `room=${room ?? '-'} order=${order} bounds=${bounds}`,
          query,
          index: room === undefined ? 'primary' : 'room',
        });
      }
      const ids = Array.from({ length: 100 }, (_, i) => idOf(i * 577));
      out.push({
        label: `room=${room ?? '-'} order=${order} id=×100`,
        query: { order, limit: 51, ids, ...(room === undefined ? {} : { room }) },
        // In a room, each id is found by either key (without statistics SQLite takes the room's).
        index: room === undefined ? 'primary' : 'either',
      });
      // A thread (in a room, or not): its range of the (replyTo, id) key, whatever else is asked.
      for (const bounds of ['none', 'after', 'before', 'both'] as const) {
        out.push({
          label: `room=${room ?? '-'} order=${order} replyTo bounds=${bounds}`,
          query: {
            order,
            limit: 51,
            replyTo: idOf(20_000),
            ...(room === undefined ? {} : { room }),
            ...(bounds === 'after' || bounds === 'both' ? { after: idOf(20_100) } : {}),
            ...(bounds === 'before' || bounds === 'both' ? { before: idOf(20_400) } : {}),
          },
          index: 'reply',
        });
      }
    }
  }
  return out;
}

/** An around page's shapes: both halves walk the list's own key, from the middle of the table. */
function aroundShapes(): { label: string; query: Shape; around: string; index: Index }[] {
  const out: { label: string; query: Shape; around: string; index: Index }[] = [];
  for (const room of [undefined, 'room-3']) {
    for (const order of ['asc', 'desc'] as const) {
      for (const readableBy of [undefined, 'ada']) {
        out.push({
          label: `around: room=${room ?? '-'} order=${order}${readableBy ? ' readable' : ''}`,
          query: {
            order,
            limit: 50,
            ...(room === undefined ? {} : { room }),
            ...(readableBy === undefined ? {} : { readableBy }),
          },
          around: idOf(30_000),
          index: room === undefined ? 'primary' : 'room',
        });
      }
      // A thread: its key (reply_to, id), with the room beside it when one is named.
      out.push({
        label: `around: replyTo room=${room ?? '-'} order=${order}`,
        query: { order, limit: 50, replyTo: idOf(30_000), ...(room === undefined ? {} : { room }) },
        around: idOf(30_200),
        index: 'reply',
      });
    }
  }
  return out;
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}

describe('list plans on PostgreSQL', async () => {
  const skip = skipUnless(await postgresAvailable(), `PostgreSQL at ${PG_BASE_URL}`);
  let db: TestDatabase;
  let client: pg.Client;

  before(async () => {
    if (skip !== false) return;
    db = await migratedDatabase(postgresEngine);
    const schema = new URL(db.url).searchParams.get('schema')!;
    client = new pg.Client({ connectionString: PG_BASE_URL });
    await client.connect();
    await client.query(`SET search_path = ${schema}`);
    // Search text as search-text.ts makes it: a common word in every tenth message, a rare
    // one in every 3000th.
    await client.query(
      `INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body,
         search_text, reply_to)
       SELECT ('01900000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
              'room-' || (i % $2), 'ada', t, now(), now(), 1, '{}', t,
              CASE WHEN i % $3 = 1 THEN ('01900000-0000-7000-8000-'
                || lpad(to_hex(i - i % $4), 12, '0'))::uuid END
       FROM (SELECT i, 'message ' || i || CASE WHEN i % 10 = 0 THEN ' common' ELSE '' END
               || CASE WHEN i % 3000 = 7 THEN ' zebrafish' ELSE '' END AS t
             FROM generate_series(0, $1 - 1) AS i) AS s`,
      [ROWS, ROOMS, REPLY_EVERY, THREAD],
    );
    // Rooms as the readable condition meets them: many, some private, a subject a member of
    // some (enough rows that a planner would rather scan them than look each up, if it could).
    await client.query(
      `INSERT INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version)
       SELECT 'room-' || i, CASE WHEN i % 4 = 3 THEN 'private' ELSE 'public' END, '', NULL,
              now(), now(), 1
       FROM generate_series(0, $1 - 1) AS i`,
      [ROOMS * 1000],
    );
    await client.query(
      `INSERT INTO memberships (room, subject, role, joined_at)
       SELECT 'room-' || (i % $1), 'user-' || i, 'member', now()
       FROM generate_series(0, 49999) AS i
       UNION ALL SELECT 'room-7', 'ada', 'member', now()`,
      [ROOMS * 1000],
    );
    // Statistics of every row, not of a random sample (30,000 rows at the default target): the
    // plans then follow from the data alone, the same in every run.
    await client.query('SET default_statistics_target = 1000');
    await client.query('ANALYZE messages');
    await client.query('ANALYZE rooms');
    await client.query('ANALYZE memberships');
  });

  after(async () => {
    if (skip !== false) return;
    await client.end();
    await db.cleanup();
  });

  it(
    "a subject's room list: memberships by the subject's index, each room's newest messages by the room index",
    { skip },
    async () => {
      await client.query('SET plan_cache_mode = force_generic_plan');
      const plan = async (sql: string, values: string) => {
        await client.query(`PREPARE q AS ${sql}`);
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE q(${values})`,
        );
        await client.query('DEALLOCATE q');
        const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
        const text = nodes
          .map((n) => `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`)
          .join(' > ');
        assert.ok(!nodes.some((n) => /Sort/.test(n['Node Type'])), `a sort in ${text}`);
        for (const node of nodes.filter((n) => n['Node Type'] === 'Seq Scan')) {
          assert.equal(node['Relation Name'], 'change_log_meta', `a sequential scan in ${text}`);
        }
        return { nodes, text };
      };
      const rooms = Array.from({ length: 200 }, (_, i) => `room-${i}`);
      const recent = await plan(postgresRecent, `'{${rooms.join(',')}}', 128`);
      const scans = recent.nodes.filter((n) => n['Relation Name'] === 'messages');
      assert.ok(scans.length > 0, recent.text);
      for (const scan of scans) {
        assert.match(scan['Node Type'], /^Index (Only )?Scan/, recent.text);
        assert.equal(scan['Index Name'], 'messages_room_id', recent.text);
      }
      const mine = await plan(postgresMemberRooms, `'ada'`);
      const members = mine.nodes.filter((n) => n['Relation Name'] === 'memberships');
      assert.ok(members.length > 0, mine.text);
      for (const scan of members) {
        assert.equal(scan['Index Name'], 'memberships_subject_room', mine.text);
      }
      await client.query('RESET plan_cache_mode');
    },
  );

  it(
    "a page's reaction summaries: each message by key, its reactions by the (message, emoji, place) index",
    { skip },
    async () => {
      // Reactions on every third message, up to three emoji each: enough that a scan would show.
      await client.query(
        `INSERT INTO reactions (message_id, emoji, subject, room, created_at)
         SELECT m.id, e.emoji, 'user-' || (row_number() OVER ()) % 97, m.room, now()
         FROM messages m CROSS JOIN (VALUES ('👍'), ('🎉'), ('❤️')) AS e(emoji)
         WHERE abs(hashtext(m.id::text)) % 3 = 0
         ON CONFLICT DO NOTHING`,
      );
      await client.query('ANALYZE reactions');
      await client.query('SET plan_cache_mode = force_generic_plan');
      const ids = JSON.stringify(
        (
          await client.query<{ id: string }>('SELECT id::text AS id FROM messages LIMIT 50')
        ).rows.map((r) => r.id),
      );
      for (const readable of [false, true]) {
        await client.query(`PREPARE q AS ${postgresReactionBatch(readable)}`);
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE q('${ids}', 'ada'${readable ? ", 'ada'" : ''})`,
        );
        await client.query('DEALLOCATE q');
        const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
        const text = nodes
          .map((n) => `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`)
          .join(' > ');
        const scans = nodes.filter((n) => n['Relation Name'] !== undefined);
        for (const scan of scans.filter((n) =>
          ['messages', 'reactions'].includes(n['Relation Name']!),
        )) {
          assert.match(scan['Node Type'], /^Index (Only )?Scan/, text);
          assert.equal(
            scan['Index Name'],
            scan['Relation Name'] === 'messages'
              ? 'messages_pkey'
              : 'reactions_message_emoji_position',
            text,
          );
        }
        assert.ok(
          scans.some((n) => n['Relation Name'] === 'reactions'),
          text,
        );
        assert.ok(
          scans.some((n) => n['Relation Name'] === 'messages'),
          text,
        );
      }
      await client.query('RESET plan_cache_mode');
    },
  );

  for (const { label, query, index } of shapes()) {
    it(label, { skip }, async () => {
      const statement = postgresList(query);
      // The plan for these values, and the generic plan the service runs (its connections
      // force generic plans: see connectionConfig in postgres-store.ts).
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE shape AS ${statement.text}`);
      const literal = (value: unknown) =>
        typeof value === 'number'
          ? String(value)
          : client.escapeLiteral(Array.isArray(value) ? `{${value.join(',')}}` : String(value));
      const generic = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) EXECUTE shape(${statement.values.map(literal).join(', ')})`,
      );
      await client.query('DEALLOCATE shape');
      await client.query('RESET plan_cache_mode');
      const plans = [rows[0]!['QUERY PLAN'][0].Plan, generic.rows[0]!['QUERY PLAN'][0].Plan];
      if (query.ids === undefined) {
        // The same shape, three pages in one statement (page-batcher.ts).
        const batch = listBatchSql(listFilter(query));
        const columns = statement.values.map((v) => [v, v, v]);
        const batched = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (FORMAT JSON) ${batch.text}`,
          columns,
        );
        plans.push(batched.rows[0]!['QUERY PLAN'][0].Plan);
      }
      for (const plan of plans) assertWalksIndex(flatten(plan), index);
    });
  }

  // An around page: one statement, one walk of the list's own index from the behind half's
  // farthest row, no sort, batched as list pages are.
  for (const { label, query, around, index } of aroundShapes()) {
    it(label, { skip }, async () => {
      const statement = postgresAround(query, around);
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE shape AS ${statement.text}`);
      const literal = (value: unknown) =>
        typeof value === 'number' ? String(value) : client.escapeLiteral(String(value));
      const generic = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) EXECUTE shape(${statement.values.map(literal).join(', ')})`,
      );
      await client.query('DEALLOCATE shape');
      await client.query('RESET plan_cache_mode');
      const batch = aroundBatchSql(aroundHalves(query, around).filter);
      const batched = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${batch.text}`,
        statement.values.map((v) => [v, v, v]),
      );
      for (const plan of [rows, generic.rows, batched.rows].map(
        (r) => r[0]!['QUERY PLAN'][0].Plan,
      )) {
        const nodes = flatten(plan);
        assertWalksIndex(nodes, index);
        // Two walks of the index: the probe for the behind half's farthest row, and the page
        // read from it in the requested order (aroundWalkSql).
        const scans = nodes.filter((n) => n['Relation Name'] === 'messages');
        assert.equal(scans.length, 2, nodes.map((n) => n['Node Type']).join(' > '));
        // One lower and one upper bound of the key per walk: of two upper (or lower) row
        // comparisons the scan may start from the looser one and walk the room's history.
        for (const scan of scans) {
          const bounds = scan['Index Cond'] ?? '';
          assert.ok((bounds.match(/\) <=? /g) ?? []).length <= 1, bounds);
          assert.ok((bounds.match(/\) >=? /g) ?? []).length <= 1, bounds);
        }
      }
    });
  }

  // A search is planned for its values (searchStatement): a rare term must use the trigram
  // index (then sorting its few rows is cheap), a common one may walk an ordered key and
  // check each row until the page is full; nothing scans the table.
  for (const { label, query, indexes, mustUse } of searchShapes()) {
    it(`search: ${label}`, { skip }, async () => {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${searchStatement(query)}`,
      );
      const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
      const types = nodes.map((n) => n['Node Type']).join(' > ');
      for (const node of nodes.filter((n) => n['Node Type'] === 'Seq Scan')) {
        assert.equal(node['Relation Name'], 'change_log_meta', `a sequential scan in ${types}`);
      }
      const used = nodes.filter((n) => n['Index Name']?.startsWith('messages_'));
      assert.ok(used.length > 0, `no index of messages in ${types}`);
      for (const node of used)
        assert.ok(indexes.includes(node['Index Name']!), `${node['Index Name']} in ${types}`);
      if (mustUse !== undefined) {
        assert.ok(
          used.some((n) => n['Index Name'] === mustUse),
          `${mustUse} unused in ${types}`,
        );
      }
      // A sort only of what the trigram index found.
      if (nodes.some((n) => /Sort/.test(n['Node Type']))) {
        assert.ok(
          used.every((n) => n['Index Name'] === 'messages_search_text'),
          `a sort in ${types}`,
        );
      }
    });
  }
});

const TRIGRAM = 'messages_search_text';

function searchShapes(): { label: string; query: Shape; indexes: string[]; mustUse?: string }[] {
  const q = (text: string, inRoom = false) => searchQuery(text, inRoom);
  const out: { label: string; query: Shape; indexes: string[]; mustUse?: string }[] = [];
  for (const order of ['asc', 'desc'] as const) {
    for (const bounds of ['none', 'both'] as const) {
      const range =
        bounds === 'both' ? { after: idOf(20_000), before: idOf(40_000) } : ({} as const);
      out.push(
        {
          label: `rare term, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('zebrafish'), ...range },
          indexes: [TRIGRAM],
          mustUse: TRIGRAM,
        },
        {
          label: `rare and common term, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('zebrafish common'), ...range },
          indexes: [TRIGRAM],
          mustUse: TRIGRAM,
        },
        {
          label: `rare term readable, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('zebrafish'), readableBy: 'ada', ...range },
          indexes: [TRIGRAM],
          mustUse: TRIGRAM,
        },
        {
          label: `common term, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('common'), ...range },
          indexes: ['messages_pkey', TRIGRAM],
        },
        {
          label: `rare term in a room, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('zebrafish'), room: 'room-7', ...range },
          indexes: ['messages_room_id', TRIGRAM],
        },
        {
          label: `common term in a room, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('common'), room: 'room-7', ...range },
          indexes: ['messages_room_id', TRIGRAM],
        },
        {
          label: `short terms in a room, order=${order} bounds=${bounds}`,
          query: { order, limit: 50, q: q('ge 1', true), room: 'room-7', ...range },
          indexes: ['messages_room_id'],
        },
      );
    }
  }
  return out;
}

function assertWalksIndex(nodes: PlanNode[], index: Index): void {
  const types = nodes.map((n) => n['Node Type']);
  assert.ok(!types.some((t) => /Sort/.test(t)), `a sort in ${types.join(' > ')}`);
  // The change log's latest sequence is read in the same statement: change_log_meta is
  // one row, changes' max(seq) an index lookup.
  for (const node of nodes.filter((n) => n['Node Type'] === 'Seq Scan')) {
    assert.equal(
      node['Relation Name'],
      'change_log_meta',
      `a sequential scan in ${types.join(' > ')}`,
    );
  }
  const scans = nodes.filter((n) => n['Relation Name'] === 'messages');
  const expected = {
    primary: ['messages_pkey'],
    room: ['messages_room_id'],
    reply: ['messages_reply_to_id'],
    either: ['messages_pkey', 'messages_room_id'],
  }[index];
  assert.ok(scans.length > 0, `no scan of messages in ${types.join(' > ')}`);
  for (const scan of scans) {
    assert.ok(
      expected.includes(scan['Index Name'] ?? ''),
      `${scan['Node Type']} on ${scan['Index Name']} in ${types.join(' > ')}`,
    );
  }
}

// The service never runs ANALYZE on SQLite, so its planner has no statistics: each plan is
// checked both with them and without.
for (const analyzed of [true, false]) {
  describe(`list plans on SQLite (${analyzed ? 'analyzed' : 'no statistics, as the service runs'})`, () => {
    let db: TestDatabase;
    let sqlite: Database.Database;

    before(async () => {
      db = await migratedDatabase(sqliteEngine);
      sqlite = new Database(db.url.slice('sqlite:'.length));
      const insert = sqlite.prepare(
        `INSERT INTO messages (id, room, author, content, created_at, updated_at, version,
         search_text, search_rowid, reply_to) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      // Rooms as the readable condition meets them: some private, a subject a member of some.
      const room = sqlite.prepare(
        "INSERT OR REPLACE INTO rooms (name, visibility, topic, created_by, created_at, updated_at, version) VALUES (?, ?, '', NULL, ?, ?, 1)",
      );
      const member = sqlite.prepare(
        "INSERT INTO memberships (room, subject, role, joined_at) VALUES (?, ?, 'member', ?)",
      );
      // The trigram index entry too, as the store writes it with each create.
      const index = sqlite.prepare('INSERT INTO message_search (rowid, text) VALUES (?, ?)');
      sqlite.transaction(() => {
        for (let i = 0; i < ROWS; i++) {
          const text = `m ${i}${i % 10 === 0 ? ' common' : ''}`;
          const replyTo = i % REPLY_EVERY === 1 ? idOf(i - (i % THREAD)) : null;
          insert.run(idOf(i), `room-${i % ROOMS}`, 'ada', text, now, now, text, i + 1, replyTo);
          index.run(i + 1, text);
        }
        for (let i = 0; i < ROOMS * 100; i++)
          room.run(`room-${i}`, i % 4 === 3 ? 'private' : 'public', now, now);
        for (let i = 0; i < 5000; i++) member.run(`room-${i % ROOMS}`, `user-${i}`, now);
        member.run('room-7', 'ada', now);
      })();
      if (analyzed) sqlite.exec('ANALYZE');
    });

    after(async () => {
      sqlite.close();
      await db.cleanup();
    });

    it("a subject's room list: memberships by the subject's index, each room's newest messages by the room index", () => {
      const plan = (sql: string, ...values: unknown[]) =>
        (sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as { detail: string }[]).map(
          (p) => p.detail,
        );
      const recent = plan(sqliteRecent, 'room-3', 128);
      assert.ok(!recent.some((d) => /TEMP B-TREE/.test(d)), recent.join(' | '));
      assert.match(
        recent.find((d) => /\bmessages\b/.test(d)) ?? '',
        /^SEARCH messages USING (COVERING )?INDEX messages_room_id \(room=\?\)/,
        recent.join(' | '),
      );
      // An unread count (read-markers.ts) reads the room index alone: it holds the author.
      const unread = plan(`SELECT ${sqliteUnread('?', '?', '?')}`, 'room-3', idOf(5), 'ada');
      assert.ok(
        unread.some((d) =>
          /^SEARCH u USING COVERING INDEX messages_room_id \(room=\? AND id>\?\)/.test(d),
        ),
        unread.join(' | '),
      );
      const mine = plan(sqliteMemberRooms, { subject: 'ada' });
      assert.ok(!mine.some((d) => /^SCAN/.test(d)), mine.join(' | '));
      assert.ok(
        mine.some((d) => /^SEARCH m USING (COVERING )?INDEX memberships_subject_room/.test(d)),
        mine.join(' | '),
      );
    });

    it("a page's reaction summaries: each message by key, its reactions by the (message, emoji, place) index", () => {
      for (const readable of [false, true]) {
        const plan = (
          sqlite
            .prepare(`EXPLAIN QUERY PLAN ${sqliteReactionBatch(readable)}`)
            .all({ ids: JSON.stringify([idOf(1), idOf(2)]), me: 'ada', reader: 'ada' }) as {
            detail: string;
          }[]
        ).map((p) => p.detail);
        const text = plan.join(' | ');
        assert.ok(!plan.some((d) => /^SCAN (m|messages|reactions)\b/.test(d)), text);
        assert.ok(
          plan.some((d) => /^SEARCH m USING PRIMARY KEY \(id=\?\)/.test(d)),
          text,
        );
        const reactions = plan.filter((d) => /\breactions\b/.test(d) && /^SEARCH/.test(d));
        assert.ok(reactions.length >= 2, text);
        for (const d of reactions) {
          assert.match(
            d,
            /USING COVERING INDEX reactions_message_emoji_position \(message_id=\?\)/,
            text,
          );
        }
      }
    });

    for (const { label, query, index } of shapes()) {
      it(label, () => {
        const statement = sqliteList(query);
        const plan = sqlite
          .prepare(`EXPLAIN QUERY PLAN ${statement.text}`)
          .all(...statement.values) as { detail: string }[];
        const details = plan.map((p) => p.detail);
        const text = details.join(' | ');
        assert.ok(!details.some((d) => /TEMP B-TREE/.test(d)), `a sort in ${text}`);
        // The readable condition looks up the message's room by its key, and the subject's membership by its key.
        // (The statement names them r and s.)
        for (const lookup of details.filter((d) => /^(SEARCH|SCAN) (r|s)\b/.test(d))) {
          assert.match(lookup, /^SEARCH (r|s) USING PRIMARY KEY/, text);
        }
        if (query.readableBy !== undefined) {
          assert.equal(
            details.filter((d) => /^SEARCH (r|s) USING PRIMARY KEY/.test(d)).length,
            2,
            text,
          );
        }
        const scan = details.find((d) => /\bmessages\b/.test(d));
        assert.ok(scan !== undefined, `no scan of messages in ${text}`);
        // Messages are a WITHOUT ROWID table: the table is the primary key's B-tree, so
        // `SCAN messages` (no bound) walks the primary key in order. A room's page reads the
        // room index alone (migration 10: it holds each message's JSON), never the table.
        assert.match(
          scan,
          index === 'primary'
            ? /^SEARCH messages USING PRIMARY KEY|^SCAN messages$/
            : index === 'either'
              ? /^SEARCH messages USING (PRIMARY KEY|COVERING INDEX messages_room_id)/
              : index === 'reply'
                ? /^SEARCH messages USING INDEX messages_reply_to_id \(reply_to=\?/
                : /^SEARCH messages USING COVERING INDEX messages_room_id/,
          text,
        );
      });
    }

    // An around page: the two halves' own list statements, each walking the key from around.
    for (const { label, query, around, index } of aroundShapes()) {
      it(label, () => {
        const statements = sqliteAround(query, around);
        assert.equal(statements.length, 2);
        for (const statement of statements) {
          const details = (
            sqlite.prepare(`EXPLAIN QUERY PLAN ${statement.text}`).all(...statement.values) as {
              detail: string;
            }[]
          ).map((p) => p.detail);
          const text = details.join(' | ');
          assert.ok(!details.some((d) => /TEMP B-TREE/.test(d)), `a sort in ${text}`);
          assert.match(
            details.find((d) => /\bmessages\b/.test(d)) ?? '',
            index === 'primary'
              ? /^SEARCH messages USING PRIMARY KEY \(id[<>]\?\)/
              : index === 'reply'
                ? /^SEARCH messages USING INDEX messages_reply_to_id \(reply_to=\? AND id[<>]\?\)/
                : /^SEARCH messages USING COVERING INDEX messages_room_id \(room=\? AND id[<>]\?\)/,
            text,
          );
        }
      });
    }

    // A search: the ordered walk (with a budget) uses the list's own key and never sorts; the
    // index way starts from the FTS5 matches and finds each message by its search_rowid (then
    // sorts those few rows); short terms alone walk the room's range.
    for (const { label, query } of searchShapes()) {
      it(`search: ${label}`, () => {
        const { walk, index, range, plain } = searchStatements(listFilter(query));
        const plan = (text: string) => {
          const values = Array.from({ length: text.split('?').length - 1 }, () => 'x');
          return (
            sqlite.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as { detail: string }[]
          ).map((p) => p.detail);
        };
        const keyWalk =
          query.room === undefined
            ? /^SEARCH messages USING PRIMARY KEY|^SCAN messages$/
            : /^SEARCH messages USING (COVERING )?INDEX messages_room_id/;
        if (walk === undefined || index === undefined) {
          assert.match(label, /short terms/);
          const details = plan(plain);
          assert.ok(!details.some((d) => /TEMP B-TREE/.test(d)), details.join(' | '));
          assert.match(
            details.find((d) => /\bmessages\b/.test(d)) ?? '',
            keyWalk,
            details.join(' | '),
          );
          return;
        }
        const walked = plan(walk);
        assert.ok(!walked.some((d) => /TEMP B-TREE/.test(d)), `a sort in ${walked.join(' | ')}`);
        // The count of the walk's range (at most a budget of rows) walks a key, never the index.
        const ranged = plan(range!);
        assert.ok(
          !ranged.some((d) => /TEMP B-TREE|message_search/.test(d)),
          `the range count: ${ranged.join(' | ')}`,
        );
        if (query.room !== undefined) {
          // Counted on the room index alone, never row by row in the table.
          assert.match(
            ranged.find((d) => /\bmessages\b/.test(d)) ?? '',
            /^SEARCH messages USING COVERING INDEX messages_room_id \(room=\?/,
            ranged.join(' | '),
          );
        }
        assert.match(walked.find((d) => /\bmessages\b/.test(d)) ?? '', keyWalk, walked.join(' | '));
        const indexed = plan(index);
        const text = indexed.join(' | ');
        assert.match(indexed[0] ?? '', /^SCAN message_search VIRTUAL TABLE INDEX \d+:M/, text);
        assert.ok(
          indexed.some((d) => d.startsWith('SEARCH messages USING INDEX messages_search_rowid')),
          text,
        );
        assert.ok(!indexed.some((d) => /^SCAN messages/.test(d)), text);
      });
    }
  });
}
