/**
 * One committed change, as the change log keeps it and the event stream sends
 * it. Every write of every resource appends one in its own transaction, in the
 * one change sequence.
 */
export const CHANGE_KINDS = [
  'message.created',
  'message.updated',
  'message.deleted',
  'room.created',
  'room.updated',
  'member.added',
  'member.updated',
  'member.removed',
  'read-marker.updated',
  'reaction.added',
  'reaction.removed',
] as const;

export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface Change {
  /** The change sequence number: strictly increasing in commit order. */
  readonly seq: number;
  readonly kind: ChangeKind;
  /** The room the change belongs to (a message's, a membership's, a marker's, or the room itself). */
  readonly room: string;
  /**
   * The event's data as JSON text, sent as it is: the message (for a delete,
   * as it was), the room, the membership (`member.removed` adds `removedBy`),
   * the read marker without `unread`, or the reaction.
   */
  readonly data: string;
  /** The membership's or marker's subject for member.* and read-marker.updated; null otherwise. */
  readonly subject: string | null;
  /** True for the room.updated that turned a public room private (it reaches every stream that could read it before). */
  readonly madePrivate: boolean;
}

/** What a write appends to the change log (the log assigns the seq). */
export type NewChange = Omit<Change, 'seq'>;
