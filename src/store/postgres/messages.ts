/** Messages on PostgreSQL: creates and gets batched per turn, edits in a transaction with a row lock. */
import type pg from 'pg';
import type { IdempotencyClaim } from '../../domain/idempotency-store.ts';
import { aroundHalves, type AroundFilter } from '../../domain/around-page.ts';
import { listFilter } from '../../domain/list-filter.ts';
import type { ListQuery, Message, NewMessage } from '../../domain/message.ts';
import {
  lastIdOfMessagesJson,
  messageJson,
  withoutFirstMessage,
  withoutLastMessage,
} from '../../domain/message-json.ts';
import type {
  MessageEdit,
  AroundMessagePage,
  MessagePage,
  MessageStore,
  MessageText,
  RecentMessages,
  WriteCheck,
} from '../../domain/message-store.ts';
import { createdMessage, updateOutcome } from '../../domain/message-writes.ts';
import {
  editRevisions,
  revisionPage,
  revisionValues,
  type Revision,
  type RevisionPage,
} from '../../domain/revision.ts';
import { searchText } from '../../domain/search-text.ts';
import { memberAdded, roomCreated } from '../../domain/room-changes.ts';
import type { LastMessage, Membership, Room } from '../../domain/room.ts';
import type { AccessFacts } from '../../domain/room-access.ts';
import { privateRoom } from '../../domain/room-gate.ts';
import { appendChange, messageChange } from './changes.ts';
import { CreateBatcher, type CreateRow } from './create-batcher.ts';
import { hasCode, isStoreTimeout, PRIVATE_ROOM } from './errors.ts';
import {
  aroundBatchSql,
  aroundParameters,
  aroundSearchStatement,
  aroundSql,
  listBatchSql,
  listParameters,
  LATEST_SEQ,
  listSql,
  MAX_ID,
  MESSAGE_COLUMNS,
  searchStatement,
} from './list-sql.ts';
import { iso, MIN_ID, shareAccess } from './room-sql.ts';
import type { PostgresSession } from './postgres-store.ts';
import { PageBatcher, type PageRow } from './page-batcher.ts';
import { removeReactionsOf } from './reactions.ts';
import { ReadBatcher } from './read-batcher.ts';

/**
 * Each room's newest rows ($1 the rooms, $2 how many each) and the latest seq. The room's range
 * as row comparisons, which only the (room, id) index serves: with `room =` the planner may walk
 * the primary key backwards instead, through every other room's messages for a quiet room.
 */
export const RECENT_MESSAGES = `SELECT l.latest, x.* FROM (SELECT ${LATEST_SEQ} AS latest) l
  LEFT JOIN LATERAL (
    SELECT r.room, m.id::text AS id, m.author, ${iso('m.created_at')} AS "createdAt"
    FROM unnest($1::text[]) AS r(room)
    CROSS JOIN LATERAL (
      SELECT m.id, m.author, m.created_at FROM messages m
      WHERE (m.room, m.id) >= (r.room, '${MIN_ID}'::uuid) AND (m.room, m.id) <= (r.room, '${MAX_ID}'::uuid)
      ORDER BY m.room DESC, m.id DESC LIMIT $2
    ) m
  ) x ON true`;

/** Beyond this many, the known rooms are forgotten (and learnt again by posting). */
const MAX_KNOWN_ROOMS = 10_000;

export class PostgresMessages implements MessageStore {
  readonly #session: PostgresSession;
  /** Group commit: creates that arrive while one is committing share the next transaction. */
  readonly #creates: CreateBatcher;
  /** Gets asked for in one turn of the event loop share one query (see read-batcher.ts). */
  readonly #gets: ReadBatcher<Message>;
  readonly #texts: ReadBatcher<MessageText & { readonly id: string }>;
  /** Pages of one shape asked for in one turn share one query (see page-batcher.ts). */
  readonly #pages: PageBatcher;
  /** Around pages of one pair of shapes asked for in one turn share one query too. */
  readonly #arounds: PageBatcher<AroundFilter, AroundRow>;
  /** Rooms this process has posted to: they exist for good. */
  readonly #knownRooms = new Set<string>();

  constructor(session: PostgresSession, batching: boolean) {
    this.#session = session;
    // One create alone is a batch of one: create_messages() is the only create function.
    const create = (name: string, rows: readonly CreateRow[]) =>
      session.query(
        name,
        `SELECT create_messages($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
           $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
           $13::uuid[], $14::text[])`,
        Array.from({ length: 14 }, (_, column) => rows.map((row) => row[column])),
      );
    this.#creates = new CreateBatcher({
      batching,
      failsQueue: isStoreTimeout,
      one: async (row) => {
        await create('create-message', [row]);
      },
      many: async (rows) => {
        await create('create-messages', rows);
      },
    });
    this.#gets = new ReadBatcher<Message>(
      (ids) =>
        session.query<Message>(
          'get-messages',
          `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ANY($1::uuid[])`,
          [ids],
        ),
      batching,
    );
    this.#pages = new PageBatcher({
      batching,
      one: async (filter, values) => {
        const sql = listSql(filter);
        const [row] = await session.query<PageRow>(sql.name, sql.text, [...values]);
        return row!;
      },
      many: (filter, values) => {
        const sql = listBatchSql(filter);
        // One array per parameter, each query's value at its place.
        const columns = values[0]!.map((_, i) => values.map((v) => v[i]));
        return session.query<PageRow & { n: string }>(sql.name, sql.text, columns);
      },
    });
    this.#arounds = new PageBatcher<AroundFilter, AroundRow>({
      batching,
      one: (filter, values) => this.#aroundAlone(filter, values),
      many: (filter, values) => {
        const sql = aroundBatchSql(filter);
        const columns = values[0]!.map((_, i) => values.map((v) => v[i]));
        return session.query<AroundRow & { n: string }>(sql.name, sql.text, columns);
      },
    });
    this.#texts = new ReadBatcher<MessageText & { readonly id: string }>(
      (ids) =>
        session.query<MessageText & { id: string }>(
          'get-message-texts',
          'SELECT id::text AS id, body AS json, version, room FROM messages WHERE id = ANY($1::uuid[])',
          [ids],
        ),
      batching,
    );
  }

  async create(
    message: NewMessage,
    claim?: IdempotencyClaim,
    reader: string | null = null,
  ): Promise<Message> {
    const stored = createdMessage(message);
    // The room's and owner's JSON, used only when the message creates its room (see
    // create_messages in migrations.ts); none for a room known to exist (rooms are never
    // deleted): building them, and trying the insert, cost every create a quarter more.
    const known = this.#knownRooms.has(stored.room);
    const implicit = known ? undefined : implicitRoom(stored);
    // The deadline counts the wait for the batch ahead too (a hung batch holds the next one).
    try {
      await this.#session.withDeadline((signal) =>
        this.#creates.submit(
          [
            stored.id,
            stored.room,
            stored.author,
            stored.content,
            stored.createdAt,
            messageJson(stored),
            implicit === undefined ? null : roomCreated(implicit.room).data,
            implicit === undefined ? null : memberAdded(implicit.owner).data,
            claim?.scope ?? null,
            claim?.key ?? null,
            claim?.token ?? null,
            searchText(stored.content),
            stored.replyTo,
            reader,
          ],
          signal,
        ),
      );
    } catch (error) {
      // Mapped here, not in toStoreError: the database says which row failed, not which room,
      // and the 403 names the room (this create's own, as the batch retries row by row).
      throw hasCode(error, PRIVATE_ROOM) ? privateRoom(stored.room, error) : error;
    }
    if (!known) {
      if (this.#knownRooms.size >= MAX_KNOWN_ROOMS) this.#knownRooms.clear();
      this.#knownRooms.add(stored.room);
    }
    return stored;
  }

  get(id: string): Promise<Message | undefined> {
    return this.#gets.get(id);
  }

  async getText(id: string): Promise<MessageText | undefined> {
    const row = await this.#texts.get(id);
    return row === undefined ? undefined : { json: row.json, version: row.version, room: row.room };
  }

  update(id: string, edit: MessageEdit, check: WriteCheck, reader: string | null = null) {
    return this.#session.transaction(async (client) => {
      const current = await lockMessage(client, id);
      const outcome = updateOutcome(current, edit, check, await accessOf(client, current, reader));
      if (current !== undefined && outcome?.changed) {
        await storeEdit(client, outcome.message);
        const { replaced, added } = editRevisions(current, outcome.message, edit.editedBy);
        await client.query({
          name: 'keep-revisions',
          text: `INSERT INTO message_revisions (message_id, version, content, updated_at, edited_by)
            VALUES ($1, $2, $3, $4, $5), ($1, $6, $7, $8, $9)
            ON CONFLICT (message_id, version) DO NOTHING`,
          values: [id, ...revisionValues(replaced), ...revisionValues(added)],
        });
      }
      return outcome;
    });
  }

  async revisions(id: string, after: number, limit: number): Promise<RevisionPage | undefined> {
    // One statement, one snapshot: the message and its kept revisions after `after`. `after`
    // as bigint: the API takes any safe integer, which an integer parameter would refuse.
    const rows = await this.#session.query<{
      current: Message;
      kept: Revision[] | null;
    }>(
      'message-revisions',
      `SELECT row_to_json(m) AS current,
         (SELECT json_agg(r ORDER BY r.version) FROM (
            SELECT version, content, ${iso('updated_at')} AS "updatedAt",
              edited_by AS "editedBy"
            FROM message_revisions WHERE message_id = $1 AND version > $2::bigint
            ORDER BY version LIMIT $3) r) AS kept
       FROM (SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1) m`,
      [id, after, limit + 1],
    );
    const row = rows[0];
    return row === undefined ? undefined : revisionPage(row.current, row.kept ?? [], after, limit);
  }

  delete(
    id: string,
    check: WriteCheck,
    reader: string | null = null,
  ): Promise<Message | undefined> {
    return this.#session.transaction(async (client) => {
      const current = await lockMessage(client, id);
      if (current === undefined) return undefined;
      check(current, await accessOf(client, current, reader));
      await client.query({
        name: 'delete-message',
        text: 'DELETE FROM messages WHERE id = $1',
        values: [id],
      });
      await client.query({
        name: 'delete-revisions',
        text: 'DELETE FROM message_revisions WHERE message_id = $1',
        values: [id],
      });
      // Gone with the message, in its transaction; no reaction.removed for them.
      await removeReactionsOf(client, id);
      await appendChange(
        client,
        messageChange('message.deleted', current.room, messageJson(current)),
      );
      return current;
    });
  }

  async list(query: ListQuery & { readonly limit: number }): Promise<MessagePage> {
    const filter = listFilter(query);
    const sql = listSql(filter);
    const values = listParameters(filter, query);
    if (sql.kind === 'aggregated') {
      // A search is planned for its terms (see searchStatement), never batched.
      const row = filter.search
        ? await this.#searchPage(query)
        : await this.#pages.page(filter, values);
      const more = row.count > query.limit;
      const json = more ? withoutLastMessage(row.json!) : (row.json ?? '');
      return {
        json,
        count: Math.min(row.count, query.limit),
        lastId: lastIdOfMessagesJson(json),
        more,
        latestSeq: Number(row.latest),
      };
    }
    const rows = await this.#session.query<{
      latest: string;
      id: string | null;
      body: string | null;
    }>(sql.name, sql.text, values);
    const found = rows.filter((r) => r.id !== null);
    found.sort((a, b) => (a.id! < b.id! ? -1 : a.id! > b.id! ? 1 : 0));
    if (query.order === 'desc') found.reverse();
    const page = found.slice(0, query.limit);
    return {
      json: page.map((r) => r.body).join(','),
      count: page.length,
      lastId: page[page.length - 1]?.id ?? undefined,
      more: found.length > query.limit,
      latestSeq: Number(rows[0]!.latest),
    };
  }

  async recent(rooms: readonly string[], perRoom: number): Promise<RecentMessages> {
    // One statement: one snapshot.
    const rows = await this.#session.query<{
      latest: string;
      room: string | null;
      id: string | null;
      author: string;
      createdAt: string;
    }>('recent-messages', RECENT_MESSAGES, [rooms, perRoom]);
    const found = new Map<string, LastMessage[]>();
    for (const row of rows) {
      if (row.room === null || row.id === null) continue;
      let list = found.get(row.room);
      if (list === undefined) found.set(row.room, (list = []));
      list.push({ id: row.id, author: row.author, createdAt: row.createdAt });
    }
    for (const list of found.values())
      list.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return { seq: Number(rows[0]!.latest), rooms: found };
  }

  async around(
    query: ListQuery & { readonly limit: number },
    around: string,
  ): Promise<AroundMessagePage> {
    const halves = aroundHalves(query, around);
    const { filter, behind, ahead } = halves;
    // A search is planned for its terms (as a search page is), never batched; nor is a page
    // of an id list: a batch passes each parameter as an array of the pages' values, and an
    // id list is an array already (as a list of ids is read alone).
    const row = filter.search
      ? (await this.#session.query<AroundRow>('', aroundSearchStatement(halves, around), []))[0]!
      : filter.whole.walk === 'ids'
        ? await this.#aroundAlone(filter, aroundParameters(halves, around))
        : await this.#arounds.page(filter, aroundParameters(halves, around));
    // The database joined the rows in order: the behind half's extra one, if read, first; after
    // the ahead half's size + 1, rows it need not have read (see aroundWalkSql), cut here.
    let json = row.json ?? '';
    let aheadRead = row.total - row.behind;
    for (; aheadRead > ahead.limit + 1; aheadRead -= 1) json = withoutLastMessage(json);
    const moreBefore = row.behind > behind.limit;
    const more = aheadRead > ahead.limit;
    if (moreBefore) json = withoutFirstMessage(json);
    if (more) json = withoutLastMessage(json);
    return {
      json,
      count: Math.min(row.behind, behind.limit) + Math.min(aheadRead, ahead.limit),
      lastId: lastIdOfMessagesJson(json),
      more,
      moreBefore,
      latestSeq: Number(row.latest),
    };
  }

  async #aroundAlone(filter: AroundFilter, values: readonly unknown[]): Promise<AroundRow> {
    const sql = aroundSql(filter);
    const [row] = await this.#session.query<AroundRow>(sql.name, sql.text, [...values]);
    return row!;
  }

  async #searchPage(query: ListQuery & { readonly limit: number }): Promise<PageRow> {
    // Unnamed: a text of its own each time, nothing to keep prepared.
    const [row] = await this.#session.query<PageRow>('', searchStatement(query), []);
    return row!;
  }
}

/** An around page as the database answers it (list-sql.ts aroundSql). */
interface AroundRow {
  readonly latest: string;
  /** The rows read on the behind side of around (at most its size + 1), and all rows read. */
  readonly behind: number;
  readonly total: number;
  /** Null when no row was read. */
  readonly json: string | null;
}

async function storeEdit(client: pg.PoolClient, edited: Message): Promise<void> {
  const json = messageJson(edited);
  await client.query({
    name: 'update-message',
    text: 'UPDATE messages SET content = $2, updated_at = $3, version = $4, body = $5, search_text = $6 WHERE id = $1',
    values: [
      edited.id,
      edited.content,
      edited.updatedAt,
      edited.version,
      json,
      searchText(edited.content),
    ],
  });
  await appendChange(client, messageChange('message.updated', edited.room, json));
}

async function lockMessage(client: pg.PoolClient, id: string): Promise<Message | undefined> {
  const { rows } = await client.query<Message>({
    name: 'lock-message',
    text: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = $1 FOR UPDATE`,
    values: [id],
  });
  return rows[0];
}

/** The reader's facts of the message's room, under its share lock (none without a reader or a message). */
async function accessOf(
  client: pg.PoolClient,
  current: Message | undefined,
  reader: string | null,
): Promise<AccessFacts | undefined> {
  return current === undefined || reader === null
    ? undefined
    : shareAccess(client, current.room, reader);
}

/** The room a message creates when its room is not a room yet, and its author's owner membership. */
function implicitRoom(m: Message): { room: Room; owner: Membership } {
  return {
    room: {
      name: m.room,
      visibility: 'public',
      topic: '',
      createdBy: m.author,
      createdAt: m.createdAt,
      updatedAt: m.createdAt,
      version: 1,
    },
    owner: { room: m.room, subject: m.author, role: 'owner', joinedAt: m.createdAt },
  };
}
