/**
 * What each write makes of a message, the same on every engine: the engine
 * reads the current row and stores the result, in one transaction.
 */
import { AppError, ErrorKinds } from '../errors.ts';
import type { Message, NewMessage } from './message.ts';
import type { MessageEdit, UpdateOutcome, WriteCheck } from './message-store.ts';
import type { AccessFacts } from './room-access.ts';
import { nextUpdatedAt } from './write-rules.ts';

/** A new message as stored: version 1, never updated. */
export function createdMessage(message: NewMessage): Message {
  return { ...message, updatedAt: message.createdAt, version: 1, replyTo: message.replyTo ?? null };
}

/**
 * Runs `check` on the current message and the reader's access facts read
 * with it (it throws to refuse), then edits it:
 * new content, version + 1, updatedAt = now (nextUpdatedAt); the same content changes
 * nothing. No message: undefined, and the check never runs.
 */
export function updateOutcome(
  current: Message | undefined,
  edit: MessageEdit,
  check: WriteCheck,
  access: AccessFacts | undefined,
): UpdateOutcome | undefined {
  if (current === undefined) return undefined;
  check(current, access);
  const { content } = edit;
  if (current.content === content) return { message: current, changed: false };
  return {
    message: {
      ...current,
      content,
      updatedAt: nextUpdatedAt(current.updatedAt, edit.now),
      version: current.version + 1,
    },
    changed: true,
  };
}

/**
 * A reply answers a message of its own room that is stored when the reply is
 * created (`parentRoom`: that message's room, read in the create's
 * transaction; undefined when there is no such message). A 400 naming
 * replyTo otherwise.
 */
export function assertReplyTarget(message: NewMessage, parentRoom: string | undefined): void {
  if (message.replyTo == null || parentRoom === message.room) return;
  throw replyTargetError();
}

/** `cause`: the engine's own error, kept so a group commit can tell it was one row's. */
export function replyTargetError(cause?: unknown): AppError {
  return new AppError(ErrorKinds.validation, 'replyTo is not a message of this room.', {
    errors: [{ pointer: '#/replyTo', detail: 'replyTo must be a stored message of the same room' }],
    cause,
  });
}
