/**
 * Reactions as an engine keeps them: one of the concerns a store is made of
 * (see store.ts). Every method is one complete, atomic operation; every write
 * appends its change to the change log in its own transaction, and a write
 * that changes nothing appends none. The rules (who may, the cap on emoji)
 * are the domain's: an engine reads the facts inside its transaction, hands
 * them to the caller's `decide`, and stores what it allows (or rolls back when
 * it throws). Reactions are ordered by when they were made; a message's
 * delete removes its reactions in its own transaction (message-store.ts).
 */
import type { Reaction, ReactionSummary } from './reaction.ts';
import type { AccessFacts } from './room-access.ts';

/** What a reaction write decides on, read inside its transaction. */
export interface ReactionFacts {
  /** The message's room; undefined when there is no such message. */
  readonly room: string | undefined;
  /** The reaction at this path now; undefined when there is none. */
  readonly current: Reaction | undefined;
  /** How many different emoji the message holds now. */
  readonly emojiCount: number;
  /** Whether some subject already reacted to the message with this emoji. */
  readonly emojiPresent: boolean;
  /**
   * The reader's facts of the message's room (when the write named a reader:
   * room-access.ts judgedReader), read so that a membership removal or a
   * turn to private is ordered with the write; otherwise undefined.
   */
  readonly access?: AccessFacts;
}

/** Which reaction a write is about: the subject's emoji on the message. */
export interface ReactionKey {
  readonly messageId: string;
  readonly emoji: string;
  readonly subject: string;
}

/** The caller's rules for a write: throws to refuse (see the class comment). */
export type DecideReaction = (facts: ReactionFacts) => void;

export interface ReactionWriteOutcome {
  readonly reaction: Reaction;
  /** False when the subject had it already: nothing was stored, no change appended. */
  readonly created: boolean;
}

/** One message's summary, with its room for the access rule. */
export interface RoomedSummary {
  readonly room: string;
  readonly reactions: ReactionSummary[];
}

/** One page of the reactions with one emoji, in the order they were made, with the message's room. */
export interface ReactorPage {
  readonly room: string;
  readonly items: Reaction[];
  /** True when more lie beyond this page. */
  readonly more: boolean;
  /** False when `after` named a subject that has no reaction with this emoji on this message. */
  readonly afterFound: boolean;
}

export interface ReactionStore {
  /**
   * In one transaction: `decide` gets the facts and throws to refuse. When
   * the subject has no reaction with this emoji yet, it is stored (createdAt
   * = now, after every current reaction of the message in order) and
   * `reaction.added` appended; otherwise nothing changes.
   */
  put(
    key: ReactionKey,
    now: string,
    decide: DecideReaction,
    reader?: string | null,
  ): Promise<ReactionWriteOutcome>;

  /** In one transaction: `decide` (which throws to refuse), then the delete and `reaction.removed`. Returns it as it was. */
  remove(key: ReactionKey, decide: DecideReaction, reader?: string | null): Promise<Reaction>;

  /**
   * The message's emoji, counted, ordered by each one's earliest current
   * reaction; `me` when `subject` is among the reactors (null: never).
   * Undefined when there is no such message.
   */
  summary(messageId: string, subject: string | null): Promise<RoomedSummary | undefined>;

  /**
   * At most `limit` reactions with `emoji`, in the order they were made,
   * after `after`'s own (exclusive). Undefined when there is no such message.
   */
  reactors(
    messageId: string,
    emoji: string,
    query: { readonly after?: string; readonly limit: number },
  ): Promise<ReactorPage | undefined>;

  /**
   * The summaries of several messages in one round trip, in the order of
   * `messageIds` (lowercase, no repeats); messages that do not exist, or
   * (with `readableBy`) whose room that subject may not read, are left out.
   * Answered as the JSON text of the `MessageReactions[]`, byte for byte what
   * JSON.stringify writes for it: an engine that can write it in its query
   * builds no objects (a page's batch is a hot path: one per history page).
   */
  summaries(
    messageIds: readonly string[],
    subject: string | null,
    readableBy?: string,
  ): Promise<string>;
}
