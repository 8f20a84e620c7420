/**
 * The change each room, membership and marker write appends, the same on
 * every engine: the engines store exactly these (kind, room, data text,
 * subject, madePrivate) in the write's own transaction.
 */
import type { NewChange } from './change.ts';
import type { Membership, ReadMarker, Room } from './room.ts';

/** A room's JSON text, fields in the schema's order. */
export function roomJson(room: Room): string {
  return JSON.stringify({
    name: room.name,
    visibility: room.visibility,
    topic: room.topic,
    createdBy: room.createdBy,
    createdAt: room.createdAt,
    updatedAt: room.updatedAt,
    version: room.version,
  });
}

function membershipFields(m: Membership) {
  return { room: m.room, subject: m.subject, role: m.role, joinedAt: m.joinedAt };
}

export function roomCreated(room: Room): NewChange {
  return {
    kind: 'room.created',
    room: room.name,
    data: roomJson(room),
    subject: null,
    madePrivate: false,
  };
}

export function roomUpdated(room: Room, before: Room): NewChange {
  return {
    kind: 'room.updated',
    room: room.name,
    data: roomJson(room),
    subject: null,
    madePrivate: before.visibility === 'public' && room.visibility === 'private',
  };
}

export function memberAdded(m: Membership): NewChange {
  return {
    kind: 'member.added',
    room: m.room,
    data: JSON.stringify(membershipFields(m)),
    subject: m.subject,
    madePrivate: false,
  };
}

export function memberUpdated(m: Membership): NewChange {
  return {
    kind: 'member.updated',
    room: m.room,
    data: JSON.stringify(membershipFields(m)),
    subject: m.subject,
    madePrivate: false,
  };
}

/** `removedBy` is the subject that removed it (equal to `subject` when it left; null with auth off). */
export function memberRemoved(m: Membership, removedBy: string | null): NewChange {
  return {
    kind: 'member.removed',
    room: m.room,
    data: JSON.stringify({ ...membershipFields(m), removedBy }),
    subject: m.subject,
    madePrivate: false,
  };
}

/** The marker without `unread` (it differs per moment, not per change). */
export function markerUpdated(marker: Omit<ReadMarker, 'unread'>): NewChange {
  return {
    kind: 'read-marker.updated',
    room: marker.room,
    data: JSON.stringify({
      room: marker.room,
      subject: marker.subject,
      lastRead: marker.lastRead,
      version: marker.version,
    }),
    subject: marker.subject,
    madePrivate: false,
  };
}
