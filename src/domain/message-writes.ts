/**
 * What each write makes of a message, the same on every engine: the engine
 * reads the current row and stores the result, in one transaction.
 */
import type { Message, NewMessage } from './message.ts';
import type { UpdateOutcome, WriteCheck } from './message-store.ts';

/** A new message as stored: version 1, never updated. */
export function createdMessage(message: NewMessage): Message {
  return { ...message, updatedAt: message.createdAt, version: 1 };
}

/**
 * Runs `check` on the current message (it throws to refuse), then edits it:
 * new content, version + 1, updatedAt = now; the same content changes
 * nothing. No message: undefined, and the check never runs.
 */
export function updateOutcome(
  current: Message | undefined,
  content: string,
  now: string,
  check: WriteCheck,
): UpdateOutcome | undefined {
  if (current === undefined) return undefined;
  check(current);
  if (current.content === content) return { message: current, changed: false };
  return {
    message: { ...current, content, updatedAt: now, version: current.version + 1 },
    changed: true,
  };
}
