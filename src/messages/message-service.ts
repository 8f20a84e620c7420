/**
 * The rules around every read and write: ownership, fixed fields, optimistic
 * concurrency, 404s. The store makes each write atomic and appends its change;
 * the service decides whether the write may happen and wakes the listeners.
 */
import { AppError, ErrorKinds, type FieldError } from '../errors.ts';
import type { Actor } from './actor.ts';
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

export interface MessageServiceDeps {
  readonly messages: MessageStore;
  /** A new id, larger than every id this process handed out before (UUIDv7, monotonic). */
  readonly newId: () => string;
  readonly now: () => Date;
  /** Called after every committed change, so change listeners read the log. */
  readonly onChange: () => void;
}

/** Evaluates If-Match against the current version; false means 412. */
export type VersionPrecondition = (currentVersion: number) => boolean;

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
    const message = await this.#deps.messages.create(
      {
        id: this.#deps.newId(),
        room: body.room ?? DEFAULT_ROOM,
        author,
        content: body.content,
        createdAt: this.#nowIso(),
      },
      held?.claim,
    );
    held?.close();
    this.#deps.onChange();
    return message;
  }

  /** The message as its stored JSON text and version; any id that is not stored is a 404. */
  async get(id: string): Promise<MessageText> {
    const message = isWellFormedId(id)
      ? await this.#deps.messages.getText(id.toLowerCase())
      : undefined;
    if (message === undefined) throw notFound();
    return message;
  }

  async update(
    id: string,
    body: UpdateMessageBody,
    actor: Actor | null,
    precondition?: VersionPrecondition,
  ): Promise<Message> {
    if (!isWellFormedId(id)) throw notFound();
    const key = id.toLowerCase();
    const check: WriteCheck = (current) => {
      assertMayChange(current, actor);
      assertFixedFieldsMatch(current, body);
      if (body.version !== undefined && body.version !== current.version) {
        throw new AppError(
          ErrorKinds.versionConflict,
          `The message is at version ${current.version}, not ${body.version}: read it again.`,
        );
      }
      if (body.updatedAt !== undefined && !sameInstant(body.updatedAt, current.updatedAt)) {
        throw new AppError(
          ErrorKinds.versionConflict,
          `The message was updated at ${current.updatedAt}, not ${body.updatedAt}: read it again.`,
        );
      }
      assertPrecondition(current, precondition);
    };
    const result = await this.#deps.messages.update(key, body.content, this.#nowIso(), check);
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
    const deleted = await this.#deps.messages.delete(id.toLowerCase(), (current) => {
      assertMayChange(current, actor);
      assertPrecondition(current, precondition);
    });
    if (deleted === undefined) throw notFound();
    this.#deps.onChange();
    return deleted;
  }

  /** One page: at most `limit` messages in the query's order, with the change log's latest seq. */
  listPage(query: ListQuery & { readonly limit: number }): Promise<MessagePage> {
    return this.#deps.messages.list(query);
  }

  /**
   * Every message within the query's bounds, in keyset batches, so memory
   * stays flat whatever the count and no cursor or connection stays pinned
   * while a slow client reads.
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

function notFound(): AppError {
  return new AppError(ErrorKinds.notFound, 'No message with this id.');
}

function assertMayChange(current: Message, actor: Actor | null): void {
  if (actor === null || actor.admin || actor.subject === current.author) return;
  throw new AppError(ErrorKinds.forbidden, 'Only the author may change or delete this message.');
}

function assertPrecondition(current: Message, precondition?: VersionPrecondition): void {
  if (precondition !== undefined && !precondition(current.version)) {
    throw new AppError(
      ErrorKinds.preconditionFailed,
      `If-Match does not match the current ETag "${current.version}".`,
    );
  }
}

function assertFixedFieldsMatch(current: Message, body: UpdateMessageBody): void {
  const errors: FieldError[] = [];
  const differs = (field: string) =>
    errors.push({ pointer: `#/${field}`, detail: `${field} differs from the stored message` });
  if (body.id !== undefined && body.id.toLowerCase() !== current.id) differs('id');
  if (body.room !== undefined && body.room !== current.room) differs('room');
  if (body.author !== undefined && body.author !== current.author) differs('author');
  if (body.createdAt !== undefined && !sameInstant(body.createdAt, current.createdAt)) {
    differs('createdAt');
  }
  if (errors.length > 0) {
    throw new AppError(
      ErrorKinds.fixedField,
      `Fixed fields cannot change: ${errors.map((e) => ('pointer' in e ? e.pointer.slice(2) : '')).join(', ')}.`,
      { errors },
    );
  }
}

function sameInstant(a: string, b: string): boolean {
  return Date.parse(a) === Date.parse(b);
}
