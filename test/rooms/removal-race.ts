/**
 * A write by a member of a private room raced against the owner removing it,
 * through HTTP with real tokens: the write either commits while the writer
 * is a member (its change comes between the `member.added` and the
 * `member.removed` of its round in the change log) or is refused with the
 * contract's answer and changes nothing. Never a change after the removal.
 */
import assert from 'node:assert/strict';
import type { Change, ChangeKind } from '../../src/domain/change.ts';
import { assertProblem, uniqueRoom, type ContractApp } from '../http/http-contract.ts';
import { callerFor, memberPath, type Caller, type Response } from './rooms-support.ts';

/** ada owns the private room; bob, re-added at every round, is the one who writes and is removed. */
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
  /** What the round's write needs (a message, say), made while bob is a member. */
  prepare(cast: Cast, round: number): Promise<string>;
  write(cast: Cast, target: string, round: number): Promise<Response>;
}

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
 * `rounds` rounds of: bob added, the write prepared, then the write sent
 * and the removal 0 to 7 turns of the event loop after it (so both orders
 * come up). Asserts the invariant on the room's change log.
 */
export async function raceRemoval(
  app: ContractApp,
  race: RaceWrite,
  rounds: number,
): Promise<RaceOutcome> {
  const cast: Cast = {
    ada: await callerFor(app, true, 'ada'),
    bob: await callerFor(app, true, 'bob'),
    room: uniqueRoom(),
  };
  await cast.ada.putRoom(cast.room, { visibility: 'private' });
  let succeeded = 0;
  let refused = 0;
  for (let round = 0; round < rounds; round += 1) {
    await cast.ada.putMember(cast.room, 'bob');
    const target = await race.prepare(cast, round);
    const remove = () => cast.ada.delete(memberPath(cast.room, 'bob'));
    const [written, removed] = await Promise.all([
      race.write(cast, target, round),
      later(round % 8, remove),
    ]);
    assert.equal(removed.statusCode, 200, `round ${round}: ${removed.body}`);
    if (written.statusCode === race.ok) {
      succeeded += 1;
    } else {
      assertProblem(written, race.refused.status, race.refused.type);
      refused += 1;
    }
  }
  const log = await app.t.app.store.changes.since(0, 1_000_000);
  assertWritesWhileMember(
    log.filter((c) => c.room === cast.room),
    race.change,
    succeeded,
  );
  return { succeeded, refused };
}

/**
 * In seq order, each change of `kind` comes while bob is a member (after a
 * `member.added` of bob and before the next `member.removed`), and there are
 * as many as writes went through: a refused write appended nothing.
 */
function assertWritesWhileMember(log: readonly Change[], kind: ChangeKind, succeeded: number) {
  let member = false;
  let removedAt = 0;
  let count = 0;
  for (const change of log) {
    if (change.subject === 'bob' && change.kind === 'member.added') member = true;
    if (change.subject === 'bob' && change.kind === 'member.removed') {
      member = false;
      removedAt = change.seq;
    }
    if (change.kind !== kind) continue;
    count += 1;
    assert.ok(
      member,
      `${kind} at seq ${change.seq} comes after bob's removal at seq ${removedAt}: ${change.data}`,
    );
  }
  assert.equal(count, succeeded, `one ${kind} per write that went through`);
}
