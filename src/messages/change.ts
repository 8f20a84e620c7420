import type { Message } from './message.ts';

export type ChangeKind = 'message.created' | 'message.updated' | 'message.deleted';

/** One committed change, as the change log keeps it. */
export interface Change {
  /** The change sequence number: strictly increasing in commit order. */
  readonly seq: number;
  readonly kind: ChangeKind;
  /** The message after the change (for a delete: as it was when deleted). */
  readonly message: Message;
}
