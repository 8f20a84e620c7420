/**
 * The access rule applied to a request: reads the facts of a room for the
 * actor and asks room-access.ts. Every service goes through here, so a path
 * that names a room cannot forget the rule.
 */
import { AppError, ErrorKinds } from '../errors.ts';
import type { Actor } from './actor.ts';
import { mayRead } from './room-access.ts';
import type { RoomFacts, RoomStore } from './room-store.ts';

export class RoomGate {
  readonly #rooms: RoomStore;

  constructor(rooms: RoomStore) {
    this.#rooms = rooms;
  }

  /** The room's facts for the actor: a 404 when there is no such room, a 403 when the actor may not read it. */
  async readable(name: string, actor: Actor | null): Promise<RoomFacts> {
    const facts = await this.#rooms.facts(name, actor?.subject ?? null);
    if (facts === undefined) throw noSuchRoom(name);
    assertReadable(actor, facts);
    return facts;
  }

  /**
   * A 403 when the room exists and the actor may not read it; nothing when it
   * does not exist (a list of a name that is not a room is empty, a post creates it).
   */
  async assertNotHidden(name: string, actor: Actor | null): Promise<void> {
    if (actor === null || actor.admin) return;
    const facts = await this.#rooms.facts(name, actor.subject);
    if (facts !== undefined) assertReadable(actor, facts);
  }

  /** Whether the actor may read what is in this room (a message by id: unreadable is a 404, not a 403). */
  async mayReadContent(name: string, actor: Actor | null): Promise<boolean> {
    if (actor === null || actor.admin) return true;
    const facts = await this.#rooms.facts(name, actor.subject);
    return (
      facts === undefined || mayRead(actor, { visibility: facts.room.visibility, role: facts.role })
    );
  }
}

export function assertReadable(actor: Actor | null, facts: RoomFacts): void {
  if (!mayRead(actor, { visibility: facts.room.visibility, role: facts.role })) {
    throw privateRoom(facts.room.name);
  }
}

/** The 403 of a room the actor may not read; `cause`: an engine's own error, when it was the engine's. */
export function privateRoom(name: string, cause?: unknown): AppError {
  return new AppError(ErrorKinds.forbidden, `The room ${name} is private.`, { cause });
}

export function noSuchRoom(name: string): AppError {
  return new AppError(ErrorKinds.notFound, `No room named ${name}.`);
}
