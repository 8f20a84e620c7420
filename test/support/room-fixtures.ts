/** A public room with no owner, created at a fixed time, at version 1 unless `over` says otherwise. */
import type { Room } from '../../src/domain/room.ts';

export function aRoom(name: string, over: Partial<Room> = {}): Room {
  return {
    name,
    visibility: 'public',
    topic: '',
    createdBy: null,
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
    version: 1,
    ...over,
  };
}
