/**
 * The rules around every read and write: ownership, fixed fields, optimistic
 * concurrency, 404s. The store makes each write atomic and appends its change;
 * the service decides whether the write may happen and wakes the listeners.
 */
import { AppError, ErrorKinds, type FieldError } from '../errors.ts';
import type { Actor } from './actor.ts';
import { withAroundLinks, type AroundPage } from './around-page.ts';
import type { HeldClaim } from './idempotency.ts';
import {
  DEFAULT_ROOM,
  isWellFormedId,
  type CreateMessageBody,
  type ListQuery,
  type Message,
  type UpdateMessageBody,
} from './message.ts';
import type { MessagePage, MessageStore, MessageText, WriteCheck } from './message-store.ts';
import type { RevisionPage } from './revision.ts';
import { judgedReader, mayRead, type AccessFacts } from './room-access.ts';
import type { RoomGate } from './room-gate.ts';
import { readableBy } from './room-service.ts';
import {
  FixedFields,
  assertCurrent,
  assertPrecondition,
  sameInstant,
  type VersionPrecondition,
} from './write-rules.ts';

export type { VersionPrecondition };

export interface MessageServiceDeps {
  readonly messages: MessageStore;
  /** The access rule of rooms: a private room's messages are for those who may read it. */
  readonly gate: RoomGate;
  /** A new id, larger than every id this process handed out before (UUIDv7, monotonic). */
  readonly newId: () => string;
  readonly now: () => Date;
  /** Called after every committed change, so change listeners read the log. */
  readonly onChange: () => void;
}

/** How many messages one batch of a streamed list reads. */
export const STREAM_BATCH_SIZE = 500;

export class MessageService {
  readonly #deps: MessageServiceDeps;

  constructor(deps: MessageServiceDeps) {
    this.#deps = deps;
  }

  /** With a held Idempotency-Key claim, the 201 is kept in the create's own transaction. */
  async create(body: CreateMessageBody, actor: Actor | null, held?: HeldClaim): Promise<Message> {
    const authorErrors = authorRuleErrors(body, actor);
    if (authorErrors.length > 0) {
      throw new AppError(ErrorKinds.validation, authorErrors[0]!.detail, { errors: authorErrors });
    }
    const author = actor?.subject ?? body.author!;
    const room = body.room ?? DEFAULT_ROOM;
    const reader = judgedReader(actor);
    if (reader !== null) await this.#deps.gate.assertNotHidden(room, actor);
    const message = await this.#deps.messages.create(
      {
        id: this.#deps.newId(),
        room,
        author,
        content: body.content,
        createdAt: this.#nowIso(),
        replyTo: body.replyTo?.toLowerCase() ?? null,
      },
      held?.claim,
      reader,
    );
    held?.close();
    this.#deps.onChange();
    return message;
  }

  /**
   * The message as its stored JSON text and version; any id that is not
   * stored, or whose room the actor may not read, is a 404.
   */
  async get(id: string, actor: Actor | null): Promise<MessageText> {
    const message = isWellFormedId(id)
      ? await this.#deps.messages.getText(id.toLowerCase())
      : undefined;
    if (message === undefined) throw notFound();
    // Only a signed-in non-admin can be refused: the hot path with auth off reads nothing more.
    if (
      actor !== null &&
      !actor.admin &&
      !(await this.#deps.gate.mayReadContent(message.room, actor))
    ) {
      throw notFound();
    }
    return message;
  }

  /** A 404 for a message the actor may not see (before any other rule of a write is judged). */
  async #assertVisible(id: string, actor: Actor | null): Promise<void> {
    if (actor === null || actor.admin) return;
    await this.get(id, actor);
  }

  async update(
    id: string,
    body: UpdateMessageBody,
    actor: Actor | null,
    precondition?: VersionPrecondition,
  ): Promise<Message> {
    if (!isWellFormedId(id)) throw notFound();
    await this.#assertVisible(id, actor);
    const key = id.toLowerCase();
    const check: WriteCheck = (current, access) => {
      assertStillVisible(access, actor);
      assertMayChange(current, actor);
      new FixedFields()
        .compare('id', body.id?.toLowerCase(), current.id)
        .compare('room', body.room, current.room)
        .compare('author', body.author, current.author)
        .compare('createdAt', body.createdAt, current.createdAt, sameInstant)
        .compare('replyTo', body.replyTo, current.replyTo, sameId)
        .check();
      assertCurrent('message', current, body);
      assertPrecondition(current.version, precondition);
    };
    const edit = { content: body.content, now: this.#nowIso(), editedBy: actor?.subject ?? null };
    const result = await this.#deps.messages.update(key, edit, check, judgedReader(actor));
    if (result === undefined) throw notFound();
    if (result.changed) this.#deps.onChange();
    return result.message;
  }

  async delete(
    id: string,
    actor: Actor | null,
    precondition?: VersionPrecondition,
  ): Promise<Message> {
    if (!isWellFormedId(id)) throw notFound();
    await this.#assertVisible(id, actor);
    const deleted = await this.#deps.messages.delete(
      id.toLowerCase(),
      (current, access) => {
        assertStillVisible(access, actor);
        assertMayChange(current, actor);
        assertPrecondition(current.version, precondition);
      },
      judgedReader(actor),
    );
    if (deleted === undefined) throw notFound();
    this.#deps.onChange();
    return deleted;
  }

  /**
   * A page of the message's versions, oldest first: at most `limit` after
   * version `after`. A message the actor may not read is a 404, as by GET.
   */
  async revisions(
    id: string,
    page: { readonly after: number; readonly limit: number },
    actor: Actor | null,
  ): Promise<RevisionPage> {
    if (!isWellFormedId(id)) throw notFound();
    const found = await this.#deps.messages.revisions(id.toLowerCase(), page.after, page.limit);
    if (found === undefined) throw notFound();
    if (
      actor !== null &&
      !actor.admin &&
      !(await this.#deps.gate.mayReadContent(found.room, actor))
    ) {
      throw notFound();
    }
    return found;
  }

  /**
   * The query as the actor may run it: a room it may not read is a 403;
   * without a room, the rooms it may not read are left out.
   */
  async scoped<Q extends ListQuery>(query: Q, actor: Actor | null): Promise<Q> {
    if (query.room !== undefined) {
      await this.#deps.gate.assertNotHidden(query.room, actor);
      return query;
    }
    const condition = readableBy(actor);
    return condition.readableBy === undefined ? query : { ...query, ...condition };
  }

  /**
   * One page: at most `limit` messages in the query's order, with the change
   * log's latest seq. The query is one `scoped` answered.
   */
  listPage(query: ListQuery & { readonly limit: number }): Promise<MessagePage> {
    return this.#deps.messages.list(query);
  }

  /** The page of `limit` messages around a message (`around`). The query is one `scoped` answered. */
  async aroundPage(
    query: ListQuery & { readonly limit: number },
    around: string,
  ): Promise<AroundPage> {
    return withAroundLinks(await this.#deps.messages.around(query, around), around);
  }

  /**
   * Every message within the query's bounds, in keyset batches, so memory
   * stays flat whatever the count and no cursor or connection stays pinned
   * while a slow client reads. The query is one `scoped` answered.
   */
  async *stream(query: ListQuery): AsyncGenerator<MessagePage> {
    let cursor: Pick<ListQuery, 'after' | 'before'> = {};
    let remaining = query.limit ?? Number.POSITIVE_INFINITY;
    while (remaining > 0) {
      const limit = Math.min(STREAM_BATCH_SIZE, remaining);
      const page = await this.#deps.messages.list({ ...query, ...cursor, limit });
      yield page;
      if (!page.more || page.lastId === undefined) return;
      remaining -= page.count;
      const last = page.lastId;
      cursor =
        query.order === 'asc'
          ? { after: last, before: query.before }
          : { before: last, after: query.after };
    }
  }

  #nowIso(): string {
    return this.#deps.now().toISOString();
  }
}

/**
 * The create's rule on `author` that no schema can state, as it depends on
 * who asks: required with auth off; with auth on, left out or equal to the
 * token's subject. For any parsed body, so that a 400 can name these
 * failures together with the schema's.
 */
export function authorRuleErrors(body: unknown, actor: Actor | null): FieldError[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const { author } = body as { author?: unknown };
  if (actor === null) {
    return author === undefined ? [{ pointer: '#/author', detail: 'author is required' }] : [];
  }
  if (author === undefined || author === actor.subject) return [];
  return [{ pointer: '#/author', detail: "author must be left out or equal the token's subject" }];
}

/** Ids compare case-insensitively (null equals only null). */
function sameId(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string'
    ? a.toLowerCase() === b.toLowerCase()
    : a === b;
}

function notFound(): AppError {
  return new AppError(ErrorKinds.notFound, 'No message with this id.');
}

/**
 * The early 404 of #assertVisible, judged again on the facts read in the
 * write's transaction: a member removed (or a room made private) since the
 * early check must not get its write committed after that.
 */
function assertStillVisible(access: AccessFacts | undefined, actor: Actor | null): void {
  if (access !== undefined && !mayRead(actor, access)) throw notFound();
}

function assertMayChange(current: Message, actor: Actor | null): void {
  if (actor === null || actor.admin || actor.subject === current.author) return;
  throw new AppError(ErrorKinds.forbidden, 'Only the author may change or delete this message.');
}
