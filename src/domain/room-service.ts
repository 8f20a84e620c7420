/**
 * The rules around rooms, memberships and read markers: who may (through
 * room-access.ts), the last owner, forward-only markers, fixed fields and
 * versions, in the order of errors of docs/errors.md. The stores make each write
 * atomic and run these decisions inside it.
 */
import { AppError, ErrorKinds } from '../errors.ts';
import type { Actor } from './actor.ts';
import { isSelf, isSelfOrAdmin, judgedReader, mayManage, mayRead } from './room-access.ts';
import type { MemberRoomsMemo } from './member-rooms-memo.ts';
import type { RoomActivity } from './room-activity.ts';
import { RoomGate, assertReadable, noSuchRoom, privateRoom } from './room-gate.ts';
import { userRooms } from './user-rooms.ts';
import type {
  Membership,
  PutMembershipBody,
  PutReadMarkerBody,
  PutRoomBody,
  ReadMarker,
  Role,
  Room,
  UserRoom,
  Visibility,
} from './room.ts';
import type {
  MarkerFacts,
  MarkerWriteOutcome,
  MemberStore,
  MembershipFacts,
  MembershipWriteOutcome,
  ObjectPage,
  ReadMarkerStore,
  RoomFacts,
  RoomStore,
  RoomWriteOutcome,
} from './room-store.ts';
import {
  FixedFields,
  assertCurrent,
  assertPrecondition,
  sameInstant,
  type VersionPrecondition,
} from './write-rules.ts';

export interface RoomServiceDeps {
  readonly rooms: RoomStore;
  readonly members: MemberStore;
  readonly readMarkers: ReadMarkerStore;
  /** The rooms' newest messages, kept in step with the change feed (for room lists). */
  readonly activity: RoomActivity;
  /** Subjects' memberships as last read, kept in step with the change feed (for room lists). */
  readonly memberships: MemberRoomsMemo;
  /** The change log's latest seq, read from the store now. */
  readonly latestSeq: () => Promise<number>;
  /** Resolves once the change feed has handed out every change up to `seq` (true), or after a short while if it cannot (false). */
  readonly changesReached: (seq: number) => Promise<boolean>;
  readonly now: () => Date;
  /** Called after every committed change, so change listeners read the log. */
  readonly onChange: () => void;
}

/** The conditions of a room PUT: If-Match, and If-None-Match (`*`: create only). */
export interface RoomPreconditions {
  /** False for the current version: a 412 (and a 412 when there is no room). */
  readonly ifMatch?: VersionPrecondition;
  /** True for the current version: a 412 (never for a room about to be made). */
  readonly ifNoneMatch?: VersionPrecondition;
}

export interface PageQuery {
  readonly after?: string;
  readonly limit: number;
}

export class RoomService {
  readonly #deps: RoomServiceDeps;
  readonly gate: RoomGate;

  constructor(deps: RoomServiceDeps) {
    this.#deps = deps;
    this.gate = new RoomGate(deps.rooms);
  }

  async get(name: string, actor: Actor | null): Promise<Room> {
    return (await this.gate.readable(name, actor)).room;
  }

  /** Creates (201) or updates (200) a room; with auth on, its creator becomes its owner. */
  async put(
    name: string,
    body: PutRoomBody,
    actor: Actor | null,
    pre: RoomPreconditions = {},
  ): Promise<RoomWriteOutcome> {
    const subject = actor?.subject ?? null;
    const outcome = await this.#deps.rooms.put(name, subject, subject, this.#nowIso(), (facts) => {
      if (facts === undefined) {
        // The precedence list: a fixed field that differs (400) before a precondition (412).
        new FixedFields().compare('name', body.name, name).check();
        if (pre.ifMatch !== undefined) {
          throw new AppError(ErrorKinds.preconditionFailed, `No room named ${name} to match.`);
        }
        return { visibility: body.visibility ?? 'public', topic: body.topic ?? '' };
      }
      assertReadable(actor, facts);
      if (!mayManage(actor, accessOf(facts))) {
        throw new AppError(ErrorKinds.forbidden, 'Only owners and admins update a room.');
      }
      const room = facts.room;
      new FixedFields()
        .compare('name', body.name, room.name)
        .compare('createdBy', body.createdBy, room.createdBy)
        .compare('createdAt', body.createdAt, room.createdAt, sameInstant)
        .check();
      assertCurrent('room', room, body);
      assertPrecondition(room.version, pre.ifMatch);
      if (pre.ifNoneMatch?.(room.version) === true) {
        throw new AppError(
          ErrorKinds.preconditionFailed,
          `If-None-Match matches the room ${name} as it is (ETag "${room.version}").`,
        );
      }
      return {
        visibility: body.visibility ?? room.visibility,
        topic: body.topic ?? room.topic,
      };
    });
    if (outcome.changed) this.#deps.onChange();
    return outcome;
  }

  /** A page of the rooms the actor may read, by name. */
  list(
    query: PageQuery & { readonly visibility?: Visibility },
    actor: Actor | null,
  ): Promise<ObjectPage<Room>> {
    return this.#deps.rooms.list({ ...query, ...readableBy(actor) });
  }

  async getMember(name: string, subject: string, actor: Actor | null): Promise<Membership> {
    await this.gate.readable(name, actor);
    const membership = await this.#deps.members.get(name, subject);
    if (membership === undefined) throw noSuchMembership(name, subject);
    return membership;
  }

  async listMembers(
    name: string,
    query: PageQuery,
    actor: Actor | null,
  ): Promise<ObjectPage<Membership>> {
    await this.gate.readable(name, actor);
    return this.#deps.members.list(name, query);
  }

  /** Adds (201) or changes (200) a membership: owners and admins for anyone; a subject joins a public room. */
  async putMember(
    name: string,
    subject: string,
    body: PutMembershipBody,
    actor: Actor | null,
  ): Promise<MembershipWriteOutcome> {
    const outcome = await this.#deps.members.put(
      name,
      subject,
      actor?.subject ?? null,
      this.#nowIso(),
      (facts) => {
        const room = roomOf(facts, name, actor);
        const current = facts.current;
        const role: Role = body.role ?? current?.role ?? 'member';
        if (
          !mayManage(actor, accessOf(room)) &&
          !mayActForItself(actor, subject, room, current, role)
        ) {
          throw new AppError(
            ErrorKinds.forbidden,
            'Only owners and admins manage memberships; a subject may join a public room as a member.',
          );
        }
        new FixedFields()
          .compare('room', body.room, name)
          .compare('subject', body.subject, subject)
          .compare(
            'joinedAt',
            current === undefined ? undefined : body.joinedAt,
            current?.joinedAt,
            sameInstant,
          )
          .check();
        if (current?.role === 'owner' && role !== 'owner') assertNotLastOwner(room);
        return role;
      },
    );
    if (outcome.changed) this.#deps.onChange();
    return outcome;
  }

  /** Removes a membership: owners and admins remove anyone, a member removes itself (leaves). */
  async removeMember(name: string, subject: string, actor: Actor | null): Promise<Membership> {
    const removed = await this.#deps.members.remove(
      name,
      subject,
      actor?.subject ?? null,
      actor?.subject ?? null,
      (facts) => {
        const room = roomOf(facts, name, actor);
        if (facts.current === undefined) throw noSuchMembership(name, subject);
        if (!mayManage(actor, accessOf(room)) && actor?.subject !== subject) {
          throw new AppError(
            ErrorKinds.forbidden,
            'Only owners and admins remove others; a member may leave.',
          );
        }
        if (facts.current.role === 'owner') assertNotLastOwner(room);
      },
    );
    this.#deps.onChange();
    return removed;
  }

  /** A subject's marker: its own, or any with the admin role. */
  async getMarker(name: string, subject: string, actor: Actor | null): Promise<ReadMarker> {
    await this.gate.readable(name, actor);
    assertOwnOrAdmin(actor, subject, 'read markers');
    return this.#deps.readMarkers.get(name, subject);
  }

  /**
   * Moves a marker forward; with If-Match, sets it as sent (backwards too).
   * Only the subject itself sets its marker.
   */
  async putMarker(
    name: string,
    subject: string,
    body: PutReadMarkerBody,
    actor: Actor | null,
    ifMatch?: VersionPrecondition,
  ): Promise<MarkerWriteOutcome> {
    await this.gate.readable(name, actor);
    if (!isSelf(actor, subject)) {
      throw new AppError(ErrorKinds.forbidden, 'A read marker is set by its own subject only.');
    }
    new FixedFields()
      .compare('room', body.room, name)
      .compare('subject', body.subject, subject)
      .check();
    const lastRead = body.lastRead.toLowerCase();
    const decide = (facts: MarkerFacts): boolean => {
      // The early 403 again, on facts read at commit: a member removed since sets no marker.
      if (facts.access !== undefined && !mayRead(actor, facts.access)) throw privateRoom(name);
      if (!facts.messageInRoom) {
        throw new AppError(ErrorKinds.validation, 'lastRead is not a message of this room.', {
          errors: [{ pointer: '#/lastRead', detail: 'lastRead must be a message of this room' }],
        });
      }
      assertCurrent('read marker', facts.current, body);
      assertPrecondition(facts.current.version, ifMatch);
      const previous = facts.current.lastRead;
      if (ifMatch !== undefined) return previous !== lastRead;
      return previous === null || lastRead > previous;
    };
    const outcome = await this.#deps.readMarkers.put(
      name,
      subject,
      lastRead,
      decide,
      judgedReader(actor),
    );
    if (outcome.changed) this.#deps.onChange();
    return outcome;
  }

  /** The subject's rooms, most recent activity first: its own list, or any with the admin role. */
  async roomsOf(subject: string, limit: number, actor: Actor | null): Promise<UserRoom[]> {
    assertOwnOrAdmin(actor, subject, 'room lists');
    return userRooms(this.#deps, subject, limit);
  }

  #nowIso(): string {
    return this.#deps.now().toISOString();
  }
}

/** The list condition for the actor: only rooms it may read (nothing to add with auth off or for admins). */
export function readableBy(actor: Actor | null): { readonly readableBy?: string } {
  return actor === null || actor.admin ? {} : { readableBy: actor.subject };
}

function accessOf(facts: RoomFacts) {
  return { visibility: facts.room.visibility, role: facts.role };
}

/** The room of a membership write: 404 when there is none, 403 when the actor may not read it. */
function roomOf(facts: MembershipFacts, name: string, actor: Actor | null): RoomFacts {
  if (facts.room === undefined) throw noSuchRoom(name);
  assertReadable(actor, facts.room);
  return facts.room;
}

/** Without the right to manage: join a public room as a member, or re-send one's own unchanged membership. */
function mayActForItself(
  actor: Actor | null,
  subject: string,
  room: RoomFacts,
  current: Membership | undefined,
  role: Role,
): boolean {
  if (actor === null || actor.subject !== subject) return false;
  if (current === undefined) return room.room.visibility === 'public' && role === 'member';
  return current.role === role && mayRead(actor, accessOf(room));
}

function assertNotLastOwner(room: RoomFacts): void {
  if (room.owners <= 1) {
    throw new AppError(
      ErrorKinds.lastOwner,
      `The room ${room.room.name} would have no owner left.`,
    );
  }
}

function assertOwnOrAdmin(actor: Actor | null, subject: string, what: string): void {
  if (!isSelfOrAdmin(actor, subject)) {
    throw new AppError(ErrorKinds.forbidden, `Only their subject and admins read ${what}.`);
  }
}

function noSuchMembership(room: string, subject: string): AppError {
  return new AppError(ErrorKinds.notFound, `${subject} is not a member of ${room}.`);
}
