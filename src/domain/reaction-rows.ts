/**
 * What every engine does with what it read for reactions, written once: the
 * facts a write decides on, a write's rule (decide, then store or not), the
 * rows of a batch grouped per message and a page of reactors cut to its
 * limit. An engine keeps only its statements and its transaction.
 */
import type { MessageReactions, Reaction, ReactionSummary } from './reaction.ts';
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

/** One row of a batch of summaries: a message's emoji, or its one row with a null emoji when none. */
export interface SummaryRow {
  readonly messageId: string;
  readonly emoji: string | null;
  readonly count: number;
  readonly me: boolean;
}

/** Rows in the asked order, one per (message, emoji), into one entry per message. */
export function groupSummaries(rows: Iterable<SummaryRow>): MessageReactions[] {
  const out: MessageReactions[] = [];
  let last: { messageId: string; reactions: ReactionSummary[] } | undefined;
  for (const { messageId, emoji, count, me } of rows) {
    if (last === undefined || last.messageId !== messageId) {
      last = { messageId, reactions: [] };
      out.push(last);
    }
    if (emoji !== null) last.reactions.push({ emoji, count, me });
  }
  return out;
}

/** The reactors read (up to limit + 1, to know whether more lie beyond) as one page. */
export function reactorPage(room: string, read: Reaction[], limit: number): ReactorPage {
  const more = read.length > limit;
  return { room, items: more ? read.slice(0, limit) : read, more, afterFound: true };
}
