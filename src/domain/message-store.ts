/**
 * The messages themselves, as an engine keeps them: one of the concerns a
 * store is made of (see store.ts). Rows become Messages and driver errors
 * become AppErrors (503 unavailable, 507 full) before they cross. Every
 * method is one complete, atomic operation, and every write appends its
 * change to the change log in its own transaction.
 */
import type { IdempotencyClaim } from './idempotency-store.ts';
import type { ListQuery, Message, NewMessage } from './message.ts';
import type { RevisionPage } from './revision.ts';
import type { AccessFacts } from './room-access.ts';
import type { LastMessage } from './room.ts';

/**
 * Decides, inside the write's transaction, whether the write may go on;
 * throws an AppError if not. `access`: the reader's facts of the message's
 * room, read in that transaction, when the write named a reader (see
 * room-access.ts judgedReader); undefined otherwise.
 */
export type WriteCheck = (current: Message, access: AccessFacts | undefined) => void;

/** An edit of a message's content. */
export interface MessageEdit {
  readonly content: string;
  /** The edit's time: the new updatedAt. */
  readonly now: string;
  /** The subject that edits (the revision's editedBy); null with auth off. */
  readonly editedBy: string | null;
}

export interface UpdateOutcome {
  readonly message: Message;
  /** False when the content was the same: nothing was stored, no change appended. */
  readonly changed: boolean;
}

/** One page of a list, as it is sent. */
export interface MessagePage {
  /**
   * The messages' JSON texts (the copy stored with each row at write time:
   * messageJson's bytes) joined by commas, without brackets: a list is sent
   * without building an object per message.
   */
  readonly json: string;
  readonly count: number;
  /** The last message's id, lowercase (undefined when the page is empty): the next page's bound. */
  readonly lastId: string | undefined;
  /** True when more messages lie beyond this page within the query's bounds. */
  readonly more: boolean;
  /** The last change committed before this read (the same snapshot): Event-Seq. */
  readonly latestSeq: number;
}

/** The page around a message (`around`): `more` says messages lie beyond its last one. */
export interface AroundMessagePage extends MessagePage {
  /** True when messages lie beyond its first message (in the other order). */
  readonly moreBefore: boolean;
}

/** One message as it is sent: its stored JSON text and its version (the ETag). */
export interface MessageText {
  /** The copy stored with the row at write time: messageJson's bytes. */
  readonly json: string;
  readonly version: number;
  /** Its room, for the access rule. */
  readonly room: string;
}

/** The newest messages of rooms, newest first, and the log's latest seq in the same snapshot. */
export interface RecentMessages {
  readonly seq: number;
  readonly rooms: ReadonlyMap<string, readonly LastMessage[]>;
}

export interface MessageStore {
  /**
   * Stores a new message and appends its change, in one transaction; with a
   * claim, also records the 201 outcome for that Idempotency-Key atomically,
   * and stores nothing (a 503) when that claim is no longer held (freed or
   * taken over meanwhile). Resolves only once the commit is durable.
   * A message to a name that is not a room yet creates that room in the same
   * transaction: public, createdBy = the author, who becomes its owner (read
   * marker unset); the changes are room.created, member.added, then
   * message.created.
   * A reply (replyTo not null) is stored only if the message it answers is
   * stored and of the same room at that moment (assertReplyTarget, in the
   * create's transaction: a concurrent delete of it waits or comes after).
   * With a `reader` (room-access.ts judgedReader), an existing room that
   * reader may not read then (private, not a member) stores nothing: the 403
   * of room-gate.ts privateRoom. Its membership removal or the room's turn
   * to private waits for the create's commit or is seen by it.
   */
  create(message: NewMessage, claim?: IdempotencyClaim, reader?: string | null): Promise<Message>;

  /** The message with this lowercase id, or undefined. */
  get(id: string): Promise<Message | undefined>;

  /** The same message as its stored JSON text, sent as it is (GET by id): no object built, nothing serialized. */
  getText(id: string): Promise<MessageText | undefined>;

  /**
   * Runs `check` on the current message and, if it passes and the content
   * differs, stores the new content (version + 1, updatedAt = now), keeps the
   * new version as a revision (and the version it replaces, when no revision
   * of it is kept yet: see currentRevision) and appends the change, all in
   * one transaction. Undefined if there is no such message. With a `reader`,
   * `check` also gets that reader's facts of the room, read in the
   * transaction so that a membership removal or a turn to private is
   * ordered with the write (the same in delete).
   */
  update(
    id: string,
    edit: MessageEdit,
    check: WriteCheck,
    reader?: string | null,
  ): Promise<UpdateOutcome | undefined>;

  /**
   * Runs `check`, then deletes the message with its revisions and appends the
   * change, in one transaction. Returns the message as it was.
   */
  delete(id: string, check: WriteCheck, reader?: string | null): Promise<Message | undefined>;

  /**
   * At most `limit` of the message's versions after version `after`, oldest
   * first, in one snapshot with the message; undefined when there is no such
   * message. A message with no kept revision of its current version
   * (never edited since revisions were kept) answers that version alone
   * (currentRevision).
   */
  revisions(id: string, after: number, limit: number): Promise<RevisionPage | undefined>;

  /**
   * At most `limit` messages within the query's bounds, in the query's order
   * (keyset on id), read in one snapshot together with the change log's
   * latest sequence number (as ChangeLog.bounds() would say it).
   */
  list(query: ListQuery & { readonly limit: number }): Promise<MessagePage>;

  /**
   * The newest `perRoom` messages of each room (id, author, createdAt), newest
   * first, in one snapshot with the change log's latest seq; a room with none
   * is absent.
   */
  recent(rooms: readonly string[], perRoom: number): Promise<RecentMessages>;

  /**
   * The page of `query.limit` messages around `around` (around-page.ts
   * aroundHalves: its two halves, read as a keyset walk each from around
   * outwards, or as one walk from the behind half's farthest row), in the
   * query's order, both halves read in one snapshot together with the
   * change log's latest sequence number: one operation, as a list page is.
   */
  around(query: ListQuery & { readonly limit: number }, around: string): Promise<AroundMessagePage>;
}
