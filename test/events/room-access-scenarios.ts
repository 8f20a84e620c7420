/**
 * Room-access scenarios on the event stream whose outcome is the committed
 * change log filtered by the contract's rules, so they run the same on one
 * instance of either store and on several instances sharing PostgreSQL:
 * writes and streams are spread over every instance there is.
 */
import assert from 'node:assert/strict';
import type { Change } from '../../src/domain/change.ts';
import { assertReadable, of, unique, type Instances, type User } from './room-access-support.ts';

export interface Cast {
  /** Owns the rooms. */
  readonly ada: User;
  /** A member who is removed. */
  readonly bob: User;
  /** Never a member of a private room; joins a public one. */
  readonly carol: User;
  /** An admin. */
  readonly root: User;
}

/**
 * The changes of `name` written before `seq` (when the reader's access went),
 * which it may or may not have been sent: never someone else's marker.
 */
const changing = (name: string, seq: number, reader: User) => (c: Change) =>
  c.room === name && c.seq < seq && (c.kind !== 'read-marker.updated' || c.subject === reader.sub);

const room = (name: string) => `/api/rooms/${name}`;
const member = (name: string, subject: string) => `${room(name)}/members/${subject}`;
const marker = (name: string, subject: string) => `${room(name)}/read-markers/${subject}`;

/**
 * Bob is removed from a private room, a public room is made private, markers
 * are set; afterwards every subject resumes from before all of it, hopping
 * across the instances, and gets exactly what it may read now: bob only his
 * removal of the private room (not even his own marker there), carol only
 * the closing update of the other, nobody another's marker, the admin all
 * the rest.
 */
export async function replayAfterAccessChanges(x: Instances, cast: Cast): Promise<void> {
  const { ada, bob, carol, root } = cast;
  const on = (k: number) => (k % x.count) + 1;
  const start = await x.latestSeq(root);
  const secret = unique('secret');
  const closing = unique('closing');
  const open = unique('open');

  await x.call(on(1), ada, 'PUT', room(secret), { visibility: 'private' }, 201);
  await x.call(on(2), ada, 'PUT', member(secret, 'bob'), {}, 201);
  const first = await x.post(on(3), ada, secret, 'bob reads this');
  await x.call(on(1), bob, 'PUT', marker(secret, 'bob'), { lastRead: first.id }, 200);
  await x.call(on(2), ada, 'PUT', marker(secret, 'ada'), { lastRead: first.id }, 200);
  await x.call(on(3), ada, 'DELETE', member(secret, 'bob'), undefined, 200);
  for (const k of [1, 2, 3]) await x.post(on(k), ada, secret, `after bob, ${k}`);

  await x.call(on(2), ada, 'PUT', room(closing), {}, 201);
  await x.post(on(3), ada, closing, 'public for now');
  await x.call(on(1), ada, 'PUT', room(closing), { visibility: 'private' }, 200);
  await x.post(on(2), ada, closing, 'private now');

  await x.call(on(3), ada, 'PUT', room(open), {}, 201);
  // She joins first: a new member's marker starts at the newest message, and must move.
  await x.call(on(1), carol, 'PUT', member(open, 'carol'), {}, 201);
  const hello = await x.post(on(3), ada, open, 'hello');
  await x.call(on(2), carol, 'PUT', marker(open, 'carol'), { lastRead: hello.id }, 200);
  const last = await x.post(on(3), ada, unique('lobby'), 'the last one');

  const readers = [bob, carol, root, ada];
  const got = await Promise.all(
    readers.map((who, i) => x.hop(who, start, on(i + 1), () => last.id)),
  );
  const log = await x.log(start, got[0]!.at(-1)!.seq);
  for (const [i, who] of readers.entries()) assertReadable(got[i]!, log, who);

  const [ofBob, ofCarol, ofRoot] = got as [(typeof got)[0], (typeof got)[0], (typeof got)[0]];
  assert.deepEqual(
    ofBob.filter(of(secret)).map((e) => e.event),
    ['member.removed'],
  );
  assert.deepEqual(ofCarol.filter(of(secret)), []);
  assert.deepEqual(
    ofCarol.filter(of(closing)).map((e) => e.event),
    ['room.updated'],
  );
  assert.deepEqual(
    ofCarol.filter((e) => e.event === 'read-marker.updated').map((e) => e.data.room),
    [open],
  );
  assert.ok(!ofRoot.some((e) => e.event === 'read-marker.updated'));
  // Not vacuous: the log holds what they were not sent.
  assert.equal(log.filter((c) => c.kind === 'read-marker.updated').length, 3);
  assert.equal(log.filter((c) => c.room === secret && c.kind === 'message.created').length, 4);
}

/**
 * Readers replay from before a room exists and go live, hopping across the
 * instances, while it is written to through all of them, made private, and
 * bob is removed from it. What each was sent is the log filtered by the rules
 * as they stand at the end, plus, for changes written while its access was
 * still there, whatever was delivered before it went (each exactly as the
 * log has it): bob nothing of the room after his removal, carol nothing
 * after it closed but the closing update, the admin and the owner everything
 * but others' markers.
 */
export async function accessChangesWhileReading(x: Instances, cast: Cast): Promise<void> {
  const { ada, bob, carol, root } = cast;
  const on = (k: number) => (k % x.count) + 1;
  const start = await x.latestSeq(root);
  const shifting = unique('shifting');
  const lobby = unique('lobby');

  let last: string | undefined;
  const writer = async () => {
    await x.call(on(1), ada, 'PUT', room(shifting), {}, 201);
    await x.call(on(2), ada, 'PUT', member(shifting, 'bob'), {}, 201);
    await x.post(on(3), ada, lobby, 'lobby opens');
    let latest: { id: string } | undefined;
    for (let i = 0; i < 30; i++) {
      if (i % 2 === 0) latest = await x.post(on(i), ada, shifting, `w${i}`);
      else await x.post(on(i), ada, lobby, `w${i}`);
      if (i === 6) {
        await x.call(on(i + 1), bob, 'PUT', marker(shifting, 'bob'), { lastRead: latest!.id }, 200);
      }
      if (i === 10) {
        await x.call(on(i + 1), ada, 'PUT', room(shifting), { visibility: 'private' }, 200);
      }
      if (i === 14) {
        await x.call(on(i + 1), ada, 'PUT', marker(shifting, 'ada'), { lastRead: latest!.id }, 200);
      }
      if (i === 18) await x.call(on(i + 1), ada, 'DELETE', member(shifting, 'bob'), undefined, 200);
    }
    last = (await x.post(on(2), ada, lobby, 'the last one')).id;
  };
  const readers = [bob, carol, root, ada];
  const [, ...got] = await Promise.all([
    writer(),
    ...readers.map((who, i) => x.hop(who, start, on(i + 2), () => last)),
  ]);
  const end = Math.max(...got.map((g) => g.at(-1)!.seq));
  const log = await x.log(start, end);
  const seqOf = (kind: Change['kind']) =>
    log.find(
      (c) => c.room === shifting && c.kind === kind && (kind !== 'room.updated' || c.madePrivate),
    )!.seq;
  const closedAt = seqOf('room.updated');
  const removedAt = seqOf('member.removed');
  const [ofBob, ofCarol, ofRoot, ofAda] = got as [
    (typeof got)[0],
    (typeof got)[0],
    (typeof got)[0],
    (typeof got)[0],
  ];
  assertReadable(ofBob!, log, bob, changing(shifting, removedAt, bob));
  assertReadable(ofCarol!, log, carol, changing(shifting, closedAt, carol));
  assertReadable(ofRoot!, log, root);
  assertReadable(ofAda!, log, ada);
  assert.ok(ofBob!.some((e) => e.event === 'member.removed' && e.data.subject === 'bob'));
  assert.ok(!ofBob!.some((e) => of(shifting)(e) && e.seq > removedAt));
  assert.ok(!ofCarol!.some((e) => of(shifting)(e) && e.seq > closedAt));
  assert.ok(ofCarol!.some((e) => e.seq === closedAt));
}
