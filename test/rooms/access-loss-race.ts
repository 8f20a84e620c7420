/**
 * A write to a room raced against the writer losing access to it (removed
 * from a private room, or the room made private while it is no member),
 * through HTTP with real tokens: the write either commits while the writer
 * may read the room (in the change log, its change comes before the change
 * that took access away) or is refused with the contract's answer and
 * changes nothing. Never a change after access was lost.
 */
import assert from 'node:assert/strict';
import type { Change, ChangeKind } from '../../src/domain/change.ts';
import type { Room } from '../../src/domain/room.ts';
import { assertProblem, uniqueRoom, type ContractApp } from '../http/http-contract.ts';
import { callerFor, memberPath, roomPath, type Caller, type Response } from './rooms-support.ts';

/** ada owns the room; bob writes, and loses access at every round. */
export interface Cast {
  readonly ada: Caller;
  readonly bob: Caller;
  readonly room: string;
}

export interface RaceWrite {
  /** The change a write that goes through appends. */
  readonly change: ChangeKind;
  /** The status of a write that goes through. */
  readonly ok: number;
  /** The contract's answer to a writer who may not read the room. */
  readonly refused: { readonly status: number; readonly type: string };
  /** What the round's write needs (a message, say), made while bob may read the room. */
  prepare(cast: Cast, round: number): Promise<string>;
  write(cast: Cast, target: string, round: number): Promise<Response>;
}

/** How bob gets access back before a round and loses it in the race. */
export interface AccessLoss {
  readonly visibility: Room['visibility'];
  grant(cast: Cast): Promise<void>;
  revoke(cast: Cast): Promise<Response>;
  /** Whether bob may read the room after this change (undefined: the change does not say). */
  after(change: Change): boolean | undefined;
}

export const removal: AccessLoss = {
  visibility: 'private',
  grant: async ({ ada, room }) => void (await ada.putMember(room, 'bob')),
  revoke: ({ ada, room }) => ada.delete(memberPath(room, 'bob')),
  after: (change) =>
    change.subject !== 'bob'
      ? undefined
      : change.kind === 'member.added'
        ? true
        : change.kind === 'member.removed'
          ? false
          : undefined,
};

export const madePrivate: AccessLoss = {
  visibility: 'public',
  grant: async ({ ada, room }) => void (await ada.putRoom(room, { visibility: 'public' })),
  revoke: ({ ada, room }) => ada.put(roomPath(room), { visibility: 'private' }),
  after: (change) =>
    change.kind === 'room.updated'
      ? (JSON.parse(change.data) as Room).visibility === 'public'
      : undefined,
};

export interface RaceOutcome {
  readonly succeeded: number;
  readonly refused: number;
}

/** `fn` after `turns` turns of the event loop. */
async function later<T>(turns: number, fn: () => Promise<T>): Promise<T> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
  return fn();
}

/**
 * `rounds` rounds of: access granted, the write prepared, then the write
 * sent and the revocation 0 to 7 turns of the event loop after it (so both
 * orders come up). Asserts the invariant on the room's change log.
 */
export async function raceAccessLoss(
  app: ContractApp,
  loss: AccessLoss,
  race: RaceWrite,
  rounds: number,
): Promise<RaceOutcome> {
  const cast: Cast = {
    ada: await callerFor(app, true, 'ada'),
    bob: await callerFor(app, true, 'bob'),
    room: uniqueRoom(),
  };
  await cast.ada.putRoom(cast.room, { visibility: loss.visibility });
  let succeeded = 0;
  let refused = 0;
  for (let round = 0; round < rounds; round += 1) {
    await loss.grant(cast);
    const target = await race.prepare(cast, round);
    const [written, revoked] = await Promise.all([
      race.write(cast, target, round),
      later(round % 8, () => loss.revoke(cast)),
    ]);
    assert.equal(revoked.statusCode, 200, `round ${round}: ${revoked.body}`);
    if (written.statusCode === race.ok) {
      succeeded += 1;
    } else {
      assertProblem(written, race.refused.status, race.refused.type);
      refused += 1;
    }
  }
  const log = await app.t.app.store.changes.since(0, 1_000_000);
  assertWritesWithAccess(
    log.filter((c) => c.room === cast.room),
    loss,
    race.change,
    succeeded,
  );
  return { succeeded, refused };
}

/**
 * In seq order, each change of `kind` comes while bob may read the room,
 * and there are as many as writes went through: a refused write appended
 * nothing.
 */
function assertWritesWithAccess(
  log: readonly Change[],
  loss: AccessLoss,
  kind: ChangeKind,
  succeeded: number,
) {
  let access = loss.visibility === 'public';
  let lostAt = 0;
  let count = 0;
  for (const change of log) {
    const next = loss.after(change);
    if (next === false && access) lostAt = change.seq;
    if (next !== undefined) access = next;
    if (change.kind !== kind) continue;
    count += 1;
    assert.ok(
      access,
      `${kind} at seq ${change.seq} comes after bob lost access at seq ${lostAt}: ${change.data}`,
    );
  }
  assert.equal(count, succeeded, `one ${kind} per write that went through`);
}
