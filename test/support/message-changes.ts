/** The message changes of a change log read, with their data parsed: what the message tests compare. */
import type { Change } from '../../src/domain/change.ts';
import type { Message } from '../../src/domain/message.ts';

export interface MessageChange {
  readonly seq: number;
  readonly kind: Change['kind'];
  readonly message: Message;
}

export function messageChanges(changes: readonly Change[]): MessageChange[] {
  return changes
    .filter((c) => c.kind.startsWith('message.'))
    .map((c) => ({ seq: c.seq, kind: c.kind, message: JSON.parse(c.data) as Message }));
}
