/**
 * Who may do what with a room: the one place that decides it. Every route,
 * list, stream and write asks these functions; the engines only render
 * `mayRead` as a list condition (list-filter.ts: `readable`) and the change
 * feed's view (access-view.ts) feeds `mayReceive` with the same facts.
 *
 * With auth off there is no actor (null) and no access control at all.
 */
import type { Actor } from './actor.ts';
import type { Change } from './change.ts';
import type { Role, Visibility } from './room.ts';

/** The facts a decision needs about one room and one actor. */
export interface AccessFacts {
  readonly visibility: Visibility;
  /** The actor's role in the room; null when not a member. */
  readonly role: Role | null;
}

/**
 * Whose right to read a room a write judges again inside its own transaction:
 * a signed-in non-admin's subject. Null (auth off, an admin) asks the store
 * for nothing more, as mayRead would let it through whatever the facts.
 */
export function judgedReader(actor: Actor | null): string | null {
  return actor === null || actor.admin ? null : actor.subject;
}

/** Reads the room (its messages, revisions, reactions, members, events) and posts to it. */
export function mayRead(actor: Actor | null, facts: AccessFacts): boolean {
  return actor === null || actor.admin || readerMayRead(facts);
}

/** mayRead for a judgedReader (a signed-in non-admin, known to a store by its subject only). */
export function readerMayRead(facts: AccessFacts): boolean {
  return facts.visibility === 'public' || facts.role !== null;
}

/** Updates the room and manages others' memberships: its owners and admins (a room with no owner: admins only). */
export function mayManage(actor: Actor | null, facts: AccessFacts): boolean {
  return actor === null || actor.admin || facts.role === 'owner';
}

/** Acts on `subject`'s own things (memberships, markers, a room list): the subject itself, or an admin. */
export function isSelfOrAdmin(actor: Actor | null, subject: string): boolean {
  return actor === null || actor.admin || actor.subject === subject;
}

/** Acts as `subject` and nobody else (setting a read marker): admins included. */
export function isSelf(actor: Actor | null, subject: string): boolean {
  return actor === null || actor.subject === subject;
}

/** What a stream knows of a room when it delivers a change: its visibility and the actor's membership. */
export interface AccessLookup {
  visibility(room: string): Visibility;
  isMember(room: string, subject: string): boolean;
}

/**
 * Whether a change goes to a stream of `actor`, judged when it is delivered:
 * a change of a room the actor may read then, with three exceptions: a
 * `member.removed` about the actor itself always reaches it; a `room.updated`
 * that made a public room private reaches every stream (each could read it
 * before); a `read-marker.updated` reaches only the marker's subject (while
 * it may read the room).
 */
export function mayReceive(actor: Actor | null, change: Change, lookup: AccessLookup): boolean {
  if (actor === null) return true;
  // "Only the subject" narrows the rule, it does not replace it: a member removed since
  // does not get its old marker of the room back in a replay.
  if (change.kind === 'read-marker.updated') {
    return change.subject === actor.subject && mayReadNow(actor, change.room, lookup);
  }
  if (change.kind === 'member.removed' && change.subject === actor.subject) return true;
  if (change.kind === 'room.updated' && change.madePrivate) return true;
  return mayReadNow(actor, change.room, lookup);
}

/** mayRead over what a stream knows now. */
export function mayReadNow(actor: Actor | null, room: string, lookup: AccessLookup): boolean {
  if (actor === null || actor.admin) return true;
  const visibility = lookup.visibility(room);
  return mayRead(actor, {
    visibility,
    role: visibility === 'private' && lookup.isMember(room, actor.subject) ? 'member' : null,
  });
}
