/**
 * The rules around reactions: a message the actor cannot read is a 404 on
 * every path (as for the message itself), a reaction is made by its own
 * subject (admins may also remove others'), and a message holds at most
 * MAX_EMOJI_PER_MESSAGE different emoji; in the order of errors of
 * docs/errors.md. The store makes each write atomic and runs these decisions
 * inside it. Reactions never touch the message (version, updatedAt, ETag).
 */
import { AppError, ErrorKinds } from '../errors.ts';
import type { Actor } from './actor.ts';
import { isWellFormedId } from './message.ts';
import type { MessageStore } from './message-store.ts';
import { MAX_EMOJI_PER_MESSAGE, type Reaction, type ReactionSummary } from './reaction.ts';
import type {
  ReactionFacts,
  ReactionStore,
  ReactionWriteOutcome,
  ReactorPage,
} from './reaction-store.ts';
import { isSelf, isSelfOrAdmin, judgedReader, mayRead } from './room-access.ts';
import type { RoomGate } from './room-gate.ts';
import { readableBy } from './room-service.ts';

export interface ReactionServiceDeps {
  readonly reactions: ReactionStore;
  /** Read before a write, for the access rule of the message's room. */
  readonly messages: Pick<MessageStore, 'getText'>;
  readonly gate: RoomGate;
  readonly now: () => Date;
  /** Called after every committed change, so change listeners read the log. */
  readonly onChange: () => void;
}

export class ReactionService {
  readonly #deps: ReactionServiceDeps;

  constructor(deps: ReactionServiceDeps) {
    this.#deps = deps;
  }

  /** Adds (created) or finds (not created: nothing changes) `subject`'s reaction. */
  async put(
    id: string,
    emoji: string,
    subject: string,
    actor: Actor | null,
  ): Promise<ReactionWriteOutcome> {
    const key = await this.#visibleId(id, actor);
    const now = this.#deps.now().toISOString();
    const outcome = await this.#deps.reactions.put(
      { messageId: key, emoji, subject },
      now,
      (facts) => {
        assertMessage(facts, actor);
        if (!isSelf(actor, subject)) {
          throw new AppError(ErrorKinds.forbidden, 'A reaction is made by its own subject only.');
        }
        if (facts.current !== undefined || facts.emojiPresent) return;
        if (facts.emojiCount >= MAX_EMOJI_PER_MESSAGE) {
          throw new AppError(
            ErrorKinds.tooManyEmoji,
            `The message holds ${MAX_EMOJI_PER_MESSAGE} different emoji already; react with one of them.`,
          );
        }
      },
      judgedReader(actor),
    );
    if (outcome.created) this.#deps.onChange();
    return outcome;
  }

  /** Removes a reaction: its own subject, or an admin. */
  async remove(id: string, emoji: string, subject: string, actor: Actor | null): Promise<Reaction> {
    const key = await this.#visibleId(id, actor);
    const removed = await this.#deps.reactions.remove(
      { messageId: key, emoji, subject },
      (facts) => {
        assertMessage(facts, actor);
        if (facts.current === undefined) {
          throw new AppError(ErrorKinds.notFound, `${subject} has no ${emoji} on this message.`);
        }
        if (!isSelfOrAdmin(actor, subject)) {
          throw new AppError(
            ErrorKinds.forbidden,
            'A reaction is removed by its own subject or an admin only.',
          );
        }
      },
      judgedReader(actor),
    );
    this.#deps.onChange();
    return removed;
  }

  /** The message's emoji, counted, by each one's earliest current reaction. */
  async summary(id: string, actor: Actor | null): Promise<ReactionSummary[]> {
    if (!isWellFormedId(id)) throw noSuchMessage();
    const found = await this.#deps.reactions.summary(id.toLowerCase(), meOf(actor));
    if (found === undefined || !(await this.#deps.gate.mayReadContent(found.room, actor))) {
      throw noSuchMessage();
    }
    return found.reactions;
  }

  /** A page of the reactions with one emoji, in the order they were made. */
  async reactors(
    id: string,
    emoji: string,
    query: { readonly after?: string; readonly limit: number },
    actor: Actor | null,
  ): Promise<ReactorPage> {
    if (!isWellFormedId(id)) throw noSuchMessage();
    const page = await this.#deps.reactions.reactors(id.toLowerCase(), emoji, query);
    if (page === undefined || !(await this.#deps.gate.mayReadContent(page.room, actor))) {
      throw noSuchMessage();
    }
    if (!page.afterFound) {
      // Its place is gone with it: going on from a guess could skip or repeat reactors.
      const detail = `after names no current ${emoji} reaction of this message; start again from the first page`;
      throw new AppError(ErrorKinds.validation, detail, {
        errors: [{ parameter: 'after', detail }],
      });
    }
    return page;
  }

  /**
   * The summaries of several messages in one store round trip, in the order
   * asked (a repeated id once, at its first place); messages that do not
   * exist or that the actor cannot read are left out.
   */
  summaries(ids: readonly string[], actor: Actor | null): Promise<string> {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    return this.#deps.reactions.summaries(unique, meOf(actor), readableBy(actor).readableBy);
  }

  /** The lowercase id of a message the actor may see; a 404 before any other rule of a write. */
  async #visibleId(id: string, actor: Actor | null): Promise<string> {
    if (!isWellFormedId(id)) throw noSuchMessage();
    const key = id.toLowerCase();
    // With auth off or for an admin there is nothing to hide: the write's own facts say 404.
    if (actor === null || actor.admin) return key;
    const message = await this.#deps.messages.getText(key);
    if (message === undefined || !(await this.#deps.gate.mayReadContent(message.room, actor))) {
      throw noSuchMessage();
    }
    return key;
  }
}

/** Whose `me` a summary shows: nobody's with auth off. */
function meOf(actor: Actor | null): string | null {
  return actor?.subject ?? null;
}

/** A message that is gone, or whose room the actor may no longer read when the write commits: 404, as #visibleId says early. */
function assertMessage(facts: ReactionFacts, actor: Actor | null): void {
  if (facts.room === undefined) throw noSuchMessage();
  if (facts.access !== undefined && !mayRead(actor, facts.access)) throw noSuchMessage();
}

function noSuchMessage(): AppError {
  return new AppError(ErrorKinds.notFound, 'No message with this id.');
}
