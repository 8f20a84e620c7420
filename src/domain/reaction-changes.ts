/**
 * The change each reaction write appends, the same on every engine: the
 * engines store exactly these in the write's own transaction.
 */
import type { NewChange } from './change.ts';
import type { Reaction } from './reaction.ts';

/** A reaction's JSON text, fields in the schema's order. */
export function reactionJson(r: Reaction): string {
  return JSON.stringify({
    messageId: r.messageId,
    room: r.room,
    emoji: r.emoji,
    subject: r.subject,
    createdAt: r.createdAt,
  });
}

// No `subject` on the change: the delivery rule of a reaction is its room's (room-access.ts).
export function reactionAdded(r: Reaction): NewChange {
  return {
    kind: 'reaction.added',
    room: r.room,
    data: reactionJson(r),
    subject: null,
    madePrivate: false,
  };
}

/** The reaction as it was. A message's delete removes its reactions with no change of their own. */
export function reactionRemoved(r: Reaction): NewChange {
  return {
    kind: 'reaction.removed',
    room: r.room,
    data: reactionJson(r),
    subject: null,
    madePrivate: false,
  };
}
