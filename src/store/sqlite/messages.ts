/** Messages on SQLite: prepared statements, rows read as arrays, every write through the group commit. */
import type { Statement } from 'better-sqlite3';
import { claimLost } from '../../domain/idempotency.ts';
import type { IdempotencyClaim } from '../../domain/idempotency-store.ts';
import { aroundHalves, joinAroundRows, type AroundHalf } from '../../domain/around-page.ts';
import { listFilter, type ListFilter } from '../../domain/list-filter.ts';
import type { ListQuery, Message, NewMessage } from '../../domain/message.ts';
import { lastIdOfMessagesJson, messageJson } from '../../domain/message-json.ts';
import type {
  MessageEdit,
  AroundMessagePage,
  MessagePage,
  MessageStore,
  MessageText,
  RecentMessages,
  WriteCheck,
} from '../../domain/message-store.ts';
import type { LastMessage } from '../../domain/room.ts';
import { readerMayRead } from '../../domain/room-access.ts';
import { privateRoom } from '../../domain/room-gate.ts';
import { assertReplyTarget, createdMessage, updateOutcome } from '../../domain/message-writes.ts';
import {
  editRevisions,
  revisionPage,
  revisionValues,
  type Revision,
  type RevisionPage,
} from '../../domain/revision.ts';
import { searchText } from '../../domain/search-text.ts';
import type { SqliteChangeLog } from './changes.ts';
import { toStoreError } from './errors.ts';
import type { SqliteIdempotency } from './idempotency.ts';
import type { SqliteReactions } from './reactions.ts';
import type { SqliteRooms } from './rooms.ts';
import { listParameters, listSql, MESSAGE_COLUMNS } from './list-sql.ts';
import { SqliteSearch } from './search.ts';
import { SqliteSearchIndex } from './search-index.ts';
import type { SqliteSession } from './sqlite-store.ts';

/**
 * Message rows are read as arrays (`.raw()`) and built here with one object
 * literal: better-sqlite3's row objects cost about twice as much per row
 * (measured on the list stream), and every message gets the same shape.
 */
type MessageRow = [string, string, string, string, string, string, number, string | null];
type RevisionRow = [number, string, string, string | null];

/** A room's newest rows (room, how many), the (room, id) index backwards. */
export const RECENT_MESSAGES_SQL =
  'SELECT id, author, created_at FROM messages WHERE room = ? ORDER BY id DESC LIMIT ?';

export class SqliteMessages implements MessageStore {
  readonly #session: SqliteSession;
  readonly #changes: SqliteChangeLog;
  readonly #idempotency: SqliteIdempotency;
  readonly #rooms: SqliteRooms;
  readonly #reactions: SqliteReactions;
  readonly #get: Statement;
  readonly #getText: Statement;
  readonly #insert: Statement;
  readonly #update: Statement;
  readonly #delete: Statement;
  readonly #roomOf: Statement;
  readonly #keepRevision: Statement;
  readonly #addRevision: Statement;
  readonly #revisions: Statement;
  readonly #deleteRevisions: Statement;
  readonly #recent: Statement;
  /** One prepared statement per list shape. */
  readonly #lists = new Map<ListFilter, Statement>();
  readonly #search: SqliteSearch;
  readonly #index: SqliteSearchIndex;

  constructor(
    session: SqliteSession,
    changes: SqliteChangeLog,
    idempotency: SqliteIdempotency,
    rooms: SqliteRooms,
    reactions: SqliteReactions,
  ) {
    this.#session = session;
    this.#rooms = rooms;
    this.#reactions = reactions;
    this.#changes = changes;
    this.#idempotency = idempotency;
    const db = session.db;
    this.#get = db.prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ?`).raw();
    this.#getText = db.prepare('SELECT body, version, room FROM messages WHERE id = ?').raw();
    this.#insert = db
      .prepare(
        `INSERT INTO messages (id, room, author, content, created_at, updated_at, version, body,
         search_text, reply_to, search_rowid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(max(search_rowid), 0) + 1 FROM messages))
       RETURNING search_rowid`,
      )
      .pluck();
    this.#update = db
      .prepare(
        'UPDATE messages SET content = @content, updated_at = @updatedAt, version = @version, body = @body, search_text = @searchText WHERE id = @id RETURNING search_rowid',
      )
      .pluck();
    this.#delete = db.prepare('DELETE FROM messages WHERE id = ? RETURNING search_rowid').pluck();
    this.#roomOf = db.prepare('SELECT room FROM messages WHERE id = ?').pluck();
    const revision = `INTO message_revisions (message_id, version, content, updated_at, edited_by)
      VALUES (?, ?, ?, ?, ?)`;
    this.#keepRevision = db.prepare(`INSERT OR IGNORE ${revision}`);
    this.#addRevision = db.prepare(`INSERT ${revision}`);
    this.#revisions = db
      .prepare(
        `SELECT version, content, updated_at, edited_by FROM message_revisions
         WHERE message_id = ? AND version > ? ORDER BY version LIMIT ?`,
      )
      .raw();
    this.#deleteRevisions = db.prepare('DELETE FROM message_revisions WHERE message_id = ?');
    this.#recent = db.prepare(RECENT_MESSAGES_SQL).raw();
    this.#search = new SqliteSearch(db);
    this.#index = new SqliteSearchIndex(session);
  }

  create(
    message: NewMessage,
    claim?: IdempotencyClaim,
    reader: string | null = null,
  ): Promise<Message> {
    const stored = createdMessage(message);
    return this.#session.write(() => {
      if (reader !== null) this.#assertMayPost(stored.room, reader);
      const json = messageJson(stored);
      if (stored.replyTo !== null) {
        assertReplyTarget(stored, this.#roomOf.get(stored.replyTo) as string | undefined);
      }
      this.#rooms.ensureForMessage(stored.room, stored.author, stored.createdAt);
      const text = searchText(stored.content);
      const rowid = this.#insert.get(
        stored.id,
        stored.room,
        stored.author,
        stored.content,
        stored.createdAt,
        stored.updatedAt,
        stored.version,
        json,
        text,
        stored.replyTo,
      ) as number;
      this.#index.added(rowid, text);
      this.#changes.append('message.created', stored.room, json);
      // A create commits only while its claim is held (as on PostgreSQL): one whose claim was
      // freed or taken over meanwhile must not store a second copy of the retried message.
      if (claim !== undefined && !this.#idempotency.completeWithin(claim, 201, json)) {
        throw claimLost();
      }
      return stored;
    });
  }

  async get(id: string): Promise<Message | undefined> {
    try {
      this.#session.snapshot();
      return this.#read(id);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async getText(id: string): Promise<MessageText | undefined> {
    try {
      this.#session.snapshot();
      const row = this.#getText.get(id) as [string, number, string] | undefined;
      return row === undefined ? undefined : { json: row[0], version: row[1], room: row[2] };
    } catch (error) {
      throw toStoreError(error);
    }
  }

  update(id: string, edit: MessageEdit, check: WriteCheck, reader: string | null = null) {
    return this.#session.write(() => {
      const current = this.#read(id);
      const outcome = updateOutcome(current, edit, check, this.#access(current, reader));
      if (current !== undefined && outcome?.changed) {
        this.#storeEdit(outcome.message);
        const { replaced, added } = editRevisions(current, outcome.message, edit.editedBy);
        this.#keepRevision.run(id, ...revisionValues(replaced));
        this.#addRevision.run(id, ...revisionValues(added));
      }
      return outcome;
    });
  }

  async revisions(id: string, after: number, limit: number): Promise<RevisionPage | undefined> {
    try {
      this.#session.snapshot();
      const current = this.#read(id);
      if (current === undefined) return undefined;
      const rows = this.#revisions.all(id, after, limit + 1) as RevisionRow[];
      const kept = rows.map((r): Revision => ({
        version: r[0],
        content: r[1],
        updatedAt: r[2],
        editedBy: r[3],
      }));
      return revisionPage(current, kept, after, limit);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  delete(
    id: string,
    check: WriteCheck,
    reader: string | null = null,
  ): Promise<Message | undefined> {
    return this.#session.write(() => {
      const current = this.#read(id);
      if (current === undefined) return undefined;
      check(current, this.#access(current, reader));
      const rowid = this.#delete.get(id) as number | null;
      if (rowid !== null) this.#index.removed(rowid);
      this.#deleteRevisions.run(id);
      // Gone with the message, in its transaction; no reaction.removed for them.
      this.#reactions.removeAllOf(id);
      this.#changes.append('message.deleted', current.room, messageJson(current));
      return current;
    });
  }

  async list(query: ListQuery & { readonly limit: number }): Promise<MessagePage> {
    const filter = listFilter(query);
    try {
      // The bounds and the rows in one snapshot (with batching off, two statements with
      // nothing between them: this connection is the file's only writer).
      this.#session.snapshot();
      const bounds = this.#changes.readBounds();
      // One more than asked: whether more lie beyond the page.
      const rows = filter.search
        ? this.#search.rows(filter, query, query.limit + 1)
        : (this.#listStatement(filter).all(...listParameters(filter, query, 1)) as string[]);
      const more = rows.length > query.limit;
      if (more) rows.length = query.limit;
      const json = rows.join(',');
      return {
        json,
        count: rows.length,
        lastId: lastIdOfMessagesJson(json),
        more,
        latestSeq: bounds.latest,
      };
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async recent(rooms: readonly string[], perRoom: number): Promise<RecentMessages> {
    try {
      // Every room's rows and the latest seq in one snapshot (one reader: nothing between them).
      this.#session.snapshot();
      const seq = this.#changes.readBounds().latest;
      const found = new Map<string, LastMessage[]>();
      for (const room of rooms) {
        const rows = this.#recent.all(room, perRoom) as [string, string, string][];
        if (rows.length > 0) {
          found.set(
            room,
            rows.map((r) => ({ id: r[0], author: r[1], createdAt: r[2] })),
          );
        }
      }
      return { seq, rooms: found };
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async around(
    query: ListQuery & { readonly limit: number },
    around: string,
  ): Promise<AroundMessagePage> {
    const halves = aroundHalves(query, around);
    const { filter, behind, ahead } = halves;
    try {
      this.#session.snapshot();
      const bounds = this.#changes.readBounds();
      // Each half is the list's own statement, one after the other in this snapshot (with
      // batching off, statements with nothing between them, as in list). One
      // compound statement of both (a UNION ALL of the two walks as subqueries) cost more:
      // SQLite runs each subquery as a co-routine that copies every row it yields, about 8 µs
      // a page more than two statements (measured on 100k messages); a search takes its own
      // way to the rows (search.ts).
      const behindRows = this.#halfRows(filter.behind, behind);
      const aheadRows = this.#halfRows(filter.ahead, ahead);
      return joinAroundRows(halves, behindRows, aheadRows, bounds.latest);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** One half of an around page: its size and one more, nearest to around first. */
  #halfRows(filter: ListFilter, half: AroundHalf): string[] {
    return filter.search
      ? this.#search.rows(filter, half, half.limit + 1)
      : (this.#listStatement(filter).all(...listParameters(filter, half, 1)) as string[]);
  }

  #listStatement(filter: ListFilter): Statement {
    let statement = this.#lists.get(filter);
    if (statement === undefined) {
      statement = this.#session.db.prepare(listSql(filter)).pluck();
      this.#lists.set(filter, statement);
    }
    return statement;
  }

  #storeEdit(edited: Message): void {
    const json = messageJson(edited);
    const text = searchText(edited.content);
    const rowid = this.#update.get({ ...edited, body: json, searchText: text }) as number | null;
    // A row without a search_rowid (written around the store) has no entry to change.
    if (rowid !== null) this.#index.changed(rowid, text);
    this.#changes.append('message.updated', edited.room, json);
  }

  /** The reader's facts of the message's room in this write (none without a reader or a message). */
  #access(current: Message | undefined, reader: string | null) {
    return current === undefined || reader === null
      ? undefined
      : this.#rooms.readAccess(current.room, reader);
  }

  /** A room that is not one yet is created public by this post, so only an existing one can refuse. */
  #assertMayPost(room: string, reader: string): void {
    const access = this.#rooms.readAccess(room, reader);
    if (access !== undefined && !readerMayRead(access)) {
      throw privateRoom(room);
    }
  }

  #read(id: string): Message | undefined {
    const row = this.#get.get(id) as MessageRow | undefined;
    if (row === undefined) return undefined;
    return {
      id: row[0],
      room: row[1],
      author: row[2],
      content: row[3],
      createdAt: row[4],
      updatedAt: row[5],
      version: row[6],
      replyTo: row[7],
    };
  }
}
