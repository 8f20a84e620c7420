/**
 * Rooms, memberships and read markers as an engine keeps them: three of the
 * concerns a store is made of (see store.ts). As for messages, every method is
 * one complete, atomic operation; every write appends its changes to the
 * change log in its own transaction, and a write that changes nothing appends
 * none. The rules (who may, the last owner, forward-only markers) are the
 * domain's: an engine reads the facts inside its transaction, hands them to
 * the caller's `decide`, and stores what it answers (or rolls back when it
 * throws).
 */
import type { AccessFacts } from './room-access.ts';
import type { Membership, ReadMarker, Role, Room, Visibility } from './room.ts';

/** One room as the access rule sees it, for one subject. */
export interface RoomFacts {
  readonly room: Room;
  /** The subject's role in it; null when not a member (or when there is no subject). */
  readonly role: Role | null;
  /** How many owners it has now. */
  readonly owners: number;
}

/** One page of a list of objects, read in one snapshot with the change log's latest sequence. */
export interface ObjectPage<T> {
  readonly items: readonly T[];
  /** True when more lie beyond this page. */
  readonly more: boolean;
  /** The last change committed before this read (Event-Seq). */
  readonly latestSeq: number;
}

export interface RoomListQuery {
  /** Exclusive lower bound: names after it, by code point. */
  readonly after?: string;
  readonly limit: number;
  readonly visibility?: Visibility;
  /** Only rooms this subject may read: public ones and those it is a member of. Absent: every room. */
  readonly readableBy?: string;
}

/** What a room write stores: the whole new state of its changeable fields. */
export interface RoomValues {
  readonly visibility: Visibility;
  readonly topic: string;
}

export interface RoomWriteOutcome {
  readonly room: Room;
  readonly created: boolean;
  /** False when nothing changed: nothing was stored, no change appended. */
  readonly changed: boolean;
}

/** Everything the change feed's access view needs, read in one snapshot. */
export interface AccessSnapshot {
  /** The change log's latest sequence in the same snapshot: changes after it are applied on top. */
  readonly latestSeq: number;
  readonly privateRooms: readonly string[];
  /** Every membership as [room, subject]. */
  readonly memberships: ReadonlyArray<readonly [string, string]>;
}

export interface RoomStore {
  get(name: string): Promise<Room | undefined>;

  /** The room and `subject`'s place in it, in one snapshot; undefined when there is no such room. */
  facts(name: string, subject: string | null): Promise<RoomFacts | undefined>;

  /**
   * Creates or updates a room in one transaction. `decide` gets the current
   * facts for `subject` (undefined when there is no room) and answers the new
   * values, or throws to refuse. A new room gets version 1, `createdBy` =
   * `creator`, and the change `room.created`; with a creator, also its owner
   * membership (read marker unset) and `member.added`, in that order. An
   * existing room whose values differ gets version + 1, `updatedAt` = now and
   * `room.updated` (madePrivate when it turned public to private); one whose
   * values are the same is left as it is.
   */
  put(
    name: string,
    subject: string | null,
    creator: string | null,
    now: string,
    decide: (current: RoomFacts | undefined) => RoomValues,
  ): Promise<RoomWriteOutcome>;

  /** At most `limit` rooms by name (code point order), with the latest sequence of the same snapshot. */
  list(query: RoomListQuery): Promise<ObjectPage<Room>>;

  /** Every private room and every membership, for the change feed's view of who may read what. */
  accessSnapshot(): Promise<AccessSnapshot>;
}

/** What a membership write decides on, read inside its transaction. */
export interface MembershipFacts {
  /** The room, for the acting subject; undefined when there is no such room. */
  readonly room: RoomFacts | undefined;
  /** The target subject's membership now; undefined when not a member. */
  readonly current: Membership | undefined;
}

export interface MembershipWriteOutcome {
  readonly membership: Membership;
  readonly created: boolean;
  readonly changed: boolean;
}

export interface MemberStore {
  get(room: string, subject: string): Promise<Membership | undefined>;

  /**
   * Adds or changes `subject`'s membership in one transaction. `decide` gets
   * the facts (the room for `actor`, the current membership) and answers the
   * role to store, or throws. A new membership gets joinedAt = now,
   * `member.added`, and the subject's read marker is set to the room's newest
   * message (version + 1, no change appended for the marker). A changed role
   * appends `member.updated`; the same role changes nothing.
   */
  put(
    room: string,
    subject: string,
    actor: string | null,
    now: string,
    decide: (facts: MembershipFacts) => Role,
  ): Promise<MembershipWriteOutcome>;

  /**
   * Removes `subject`'s membership in one transaction, after `decide` (which
   * throws to refuse, e.g. the 404 of no membership) and appends
   * `member.removed` whose data adds `removedBy`. Returns the membership as it was.
   */
  remove(
    room: string,
    subject: string,
    actor: string | null,
    removedBy: string | null,
    decide: (facts: MembershipFacts) => void,
  ): Promise<Membership>;

  /** At most `limit` memberships of a room by subject (code point order), after `after`. */
  list(
    room: string,
    query: { readonly after?: string; readonly limit: number },
  ): Promise<ObjectPage<Membership>>;

  /**
   * Every room `subject` is a member of, with its role and read marker, in
   * one snapshot with the change log's latest seq (the newest messages and
   * unread counts come from room-activity.ts).
   */
  memberRooms(subject: string): Promise<MemberRooms>;
}

export interface MemberRoom {
  readonly room: Room;
  readonly role: Role;
  readonly lastRead: string | null;
}

export interface MemberRooms {
  readonly rooms: readonly MemberRoom[];
  /** The change log's latest seq in the same snapshot. */
  readonly seq: number;
}

/** What a marker write decides on, read inside its transaction. */
export interface MarkerFacts {
  /** The stored marker (lastRead null and version 0 when never set). */
  readonly current: ReadMarker;
  /** Whether the asked-for message exists now and belongs to the room. */
  readonly messageInRoom: boolean;
  /** The reader's facts of the room, when the write named a reader (as for reactions); otherwise undefined. */
  readonly access?: AccessFacts;
}

export interface MarkerWriteOutcome {
  readonly marker: ReadMarker;
  readonly changed: boolean;
}

export interface ReadMarkerStore {
  /** The marker with its unread count (never set: lastRead null, version 0). */
  get(room: string, subject: string): Promise<ReadMarker>;

  /**
   * In one transaction: `decide` gets the facts and answers whether to set
   * lastRead (or throws); a set that changes lastRead gets version + 1 and
   * appends `read-marker.updated` (data: the marker without `unread`).
   */
  put(
    room: string,
    subject: string,
    lastRead: string,
    decide: (facts: MarkerFacts) => boolean,
    reader?: string | null,
  ): Promise<MarkerWriteOutcome>;
}
