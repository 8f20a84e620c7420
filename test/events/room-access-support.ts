/**
 * What the room-access event tests share: subjects with real tokens, one or
 * several instances on one store, streams held on any of them, resumes that
 * hop between them, and the contract's delivery rules written out again (on
 * purpose not with the service's own access code) to filter the change log
 * into what a stream may be sent.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Change } from '../../src/domain/change.ts';
import { bearer, token } from '../auth/tokens.ts';
import type { TestApp } from '../support/test-app.ts';
import { assertStrictlyIncreasing } from './event-helpers.ts';
import { connectSse, type SseClient } from './sse-client.ts';

/** One change event as a stream sent it. */
export interface Received {
  readonly seq: number;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export interface User {
  readonly sub: string;
  readonly admin: boolean;
  readonly auth: Record<string, string>;
}

/** A subject with a real HS256 token (with the admin role when asked). */
export async function user(sub: string, admin = false): Promise<User> {
  const jwt = await token({ sub, claims: admin ? { roles: ['admin'] } : {} });
  return { sub, admin, auth: bearer(jwt) };
}

export const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** The change events a stream dispatched (no reset), parsed. */
export function received(client: SseClient): Received[] {
  return client.events
    .filter((e) => e.event !== 'reset')
    .map((e) => ({
      seq: Number(e.id),
      event: e.event,
      data: JSON.parse(e.data) as Record<string, unknown>,
    }));
}

/** Whether an event belongs to `room` (a room's data names it `name`, the others `room`). */
export const of = (room: string) => (e: Received) => e.data.room === room || e.data.name === room;

/** A change of the log as a stream sends it. */
export const asReceived = (c: Change): Received => ({
  seq: c.seq,
  event: c.kind,
  data: JSON.parse(c.data) as Record<string, unknown>,
});

/**
 * What a stream of `reader` must be sent when every change of `log` is
 * delivered after the whole log was written (a replay): a change of a room
 * the reader may read at the end of the log, except that a
 * read-marker.updated goes only to its subject (a restriction: the subject
 * must still read the room too), a member.removed about the reader always
 * goes to it, and a room.updated that took a public room private goes to
 * everyone (every signed-in subject could read it before).
 */
export function readableReplay(log: readonly Change[], reader: User): Received[] {
  const isPrivate = new Set<string>();
  const members = new Map<string, Set<string>>();
  const madePrivate = new Set<number>();
  const subjectOf = (c: Change) => (JSON.parse(c.data) as { subject?: string }).subject;
  for (const c of log) {
    if (c.kind === 'room.created' || c.kind === 'room.updated') {
      if ((JSON.parse(c.data) as { visibility: string }).visibility === 'private') {
        if (c.kind === 'room.updated' && !isPrivate.has(c.room)) madePrivate.add(c.seq);
        isPrivate.add(c.room);
      } else {
        isPrivate.delete(c.room);
      }
    } else if (c.kind === 'member.added' || c.kind === 'member.updated') {
      if (!members.has(c.room)) members.set(c.room, new Set());
      members.get(c.room)!.add(subjectOf(c)!);
    } else if (c.kind === 'member.removed') {
      members.get(c.room)?.delete(subjectOf(c)!);
    }
  }
  const mayReadAtEnd = (room: string) =>
    reader.admin || !isPrivate.has(room) || members.get(room)?.has(reader.sub) === true;
  return log
    .filter((c) => {
      if (c.kind === 'read-marker.updated')
        return subjectOf(c) === reader.sub && mayReadAtEnd(c.room);
      if (c.kind === 'member.removed' && subjectOf(c) === reader.sub) return true;
      if (madePrivate.has(c.seq)) return true;
      return mayReadAtEnd(c.room);
    })
    .map(asReceived);
}

/**
 * Asserts `got` is exactly what `readableReplay` says, in order, plus only
 * changes for which `unsettled` holds: those written while the reader's
 * access to their room was changing, which it may or may not have been sent
 * depending on when they were delivered (each one it got is the log's own).
 */
export function assertReadable(
  got: readonly Received[],
  log: readonly Change[],
  reader: User,
  unsettled: (c: Change) => boolean = () => false,
): void {
  assertStrictlyIncreasing(
    got.map((e) => e.seq),
    reader.sub,
  );
  const expected = readableReplay(log, reader);
  const required = new Set(expected.map((e) => e.seq));
  const bySeq = new Map(log.map((c) => [c.seq, c]));
  for (const e of got.filter((g) => !required.has(g.seq))) {
    const change = bySeq.get(e.seq);
    assert.ok(
      change !== undefined && unsettled(change),
      `${reader.sub} must not get ${JSON.stringify(e)}`,
    );
    assert.deepEqual(e, asReceived(change), `${reader.sub}: change ${e.seq} as the log has it`);
  }
  assert.deepEqual(
    got.filter((g) => required.has(g.seq)),
    expected,
    `${reader.sub}: every change it may read, none missing`,
  );
}

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** Instances sharing one store, numbered from 1; streams opened through it are closed by `closeStreams`. */
export class Instances {
  readonly #apps: readonly TestApp[];
  readonly #open: SseClient[] = [];

  constructor(apps: readonly TestApp[]) {
    this.#apps = apps;
  }

  get count(): number {
    return this.#apps.length;
  }

  /** A request to instance `n` as `who`; asserts the status when given one. */
  async call(n: number, who: User, method: Method, url: string, payload?: object, status?: number) {
    const response = await this.#apps[n - 1]!.app.http.inject({
      method,
      url,
      headers: who.auth,
      ...(payload === undefined ? {} : { payload }),
    });
    if (status !== undefined) {
      assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
    }
    return response;
  }

  /** POST /api/messages through instance `n`, asserting 201. */
  async post(n: number, who: User, room: string, content: string): Promise<{ id: string }> {
    const response = await this.call(n, who, 'POST', '/api/messages', { room, content }, 201);
    return response.json<{ id: string }>();
  }

  /** An event stream on instance `n` as `who` (over a real socket). */
  async stream(n: number, who: User, query = '', headers: Record<string, string> = {}) {
    const client = await connectSse(`${this.#apps[n - 1]!.url}/api/events${query}`, {
      headers: { ...who.auth, ...headers },
    });
    this.#open.push(client);
    return client;
  }

  closeStreams(): void {
    for (const client of this.#open) client.close();
  }

  /** The latest change sequence, as a list response reports it. */
  async latestSeq(who: User): Promise<number> {
    const response = await this.call(1, who, 'GET', '/api/messages?limit=1', undefined, 200);
    return Number(response.headers['event-seq']);
  }

  /** The committed change log after `since`, up to `last`, as the store reads it. */
  async log(since: number, last: number): Promise<Change[]> {
    const changes = await this.#apps[0]!.app.store.changes.since(since, 100_000);
    return changes.filter((c) => c.seq <= last);
  }

  /**
   * Posts a message to a public room of its own through instance 1 and waits
   * until every client has it: each then has every earlier change it was due.
   */
  async marker(who: User, ...clients: SseClient[]): Promise<{ id: string }> {
    const message = await this.post(1, who, unique('lobby'), 'marker');
    for (const client of clients) {
      await client.waitFor(
        (c) => received(c).some((e) => e.event === 'message.created' && e.data.id === message.id),
        'the marker message',
      );
    }
    return message;
  }

  /**
   * Resumes as `who` from `since` through every instance in turn, starting at
   * `first` (Last-Event-ID on one hop, ?since on the next), a few events per
   * hop, until the message whose id `until` returns (once it is known) has
   * arrived; the events up to it, in order.
   */
  async hop(
    who: User,
    since: number,
    first: number,
    until: () => string | undefined,
  ): Promise<Received[]> {
    const got: Received[] = [];
    let from = since;
    for (let n = 0; n < 500; n++) {
      const byHeader = n % 2 === 0;
      const client = await this.stream(
        ((first - 1 + n) % this.count) + 1,
        who,
        byHeader ? '' : `?since=${from}`,
        byHeader ? { 'last-event-id': String(from) } : {},
      );
      assert.equal(client.status, 200);
      const quota = 2 + (n % 5);
      // The last message may arrive before its POST is answered (and `until` knows it): look at
      // everything received so far, again on every frame (heartbeats included).
      const lastSeq = (events: readonly Received[]) => {
        const id = until();
        return id === undefined ? undefined : events.find((e) => e.data.id === id)?.seq;
      };
      await client.waitFor(
        (c) => received(c).length >= quota || lastSeq([...got, ...received(c)]) !== undefined,
        `${who.sub} resuming from ${from}`,
      );
      client.close();
      const events = received(client);
      assert.equal(events.length, client.events.length, `no reset: ${client.raw.slice(0, 200)}`);
      got.push(...events);
      const end = lastSeq(got);
      if (end !== undefined) return got.filter((e) => e.seq <= end);
      from = Number(client.lastEventId || from);
    }
    assert.fail(`${who.sub} did not reach the end`);
  }
}
