/**
 * What every engine does with what it read for reactions, written once: the
 * facts a write decides on, a write's rule (decide, then store or not) and a
 * page of reactors cut to its limit (a batch of summaries each engine writes
 * as JSON text in its statement). An engine keeps only its statements and its transaction.
 */
import type { Reaction } from './reaction.ts';
import type {
  DecideReaction,
  ReactionFacts,
  ReactionKey,
  ReactionWriteOutcome,
  ReactorPage,
} from './reaction-store.ts';
import type { AccessFacts } from './room-access.ts';

/** What an engine reads for a write, inside its transaction; undefined: no such message. */
export interface FactsRead {
  readonly room: string;
  /** The createdAt of the reaction at the key; undefined when there is none. */
  readonly currentAt: string | undefined;
  readonly emojiCount: number;
  readonly emojiPresent: boolean;
  /** The reader's facts of the room, when the write named one. */
  readonly access?: AccessFacts;
}

export function reactionFacts(key: ReactionKey, read: FactsRead | undefined): ReactionFacts {
  if (read === undefined) {
    return { room: undefined, current: undefined, emojiCount: 0, emojiPresent: false };
  }
  const { room, currentAt } = read;
  return {
    room,
    current: currentAt === undefined ? undefined : reactionAt(key, room, currentAt),
    emojiCount: read.emojiCount,
    emojiPresent: read.emojiPresent,
    ...(read.access === undefined ? {} : { access: read.access }),
  };
}

/**
 * A put once `decide` let it through: the reaction there already (not
 * created: the engine stores nothing), or the one the engine is to store
 * with its `reaction.added`.
 */
export function decidePut(
  key: ReactionKey,
  now: string,
  facts: ReactionFacts,
  decide: DecideReaction,
): ReactionWriteOutcome {
  decide(facts);
  if (facts.current !== undefined) return { reaction: facts.current, created: false };
  // decide refuses a missing message, so the room is known here.
  return { reaction: reactionAt(key, facts.room!, now), created: true };
}

/** In the schema's order of fields, as events and responses show them. */
function reactionAt(key: ReactionKey, room: string, createdAt: string): Reaction {
  return { messageId: key.messageId, room, emoji: key.emoji, subject: key.subject, createdAt };
}

/** A remove once `decide` let it through: the reaction the engine is to delete. */
export function decideRemove(facts: ReactionFacts, decide: DecideReaction): Reaction {
  decide(facts);
  if (facts.current === undefined) throw new Error('decide let a missing reaction be removed');
  return facts.current;
}

/** The reactors read (up to limit + 1, to know whether more lie beyond) as one page. */
export function reactorPage(room: string, read: Reaction[], limit: number): ReactorPage {
  const more = read.length > limit;
  return { room, items: more ? read.slice(0, limit) : read, more, afterFound: true };
}
