/**
 * What the rooms contract tests share: a caller that acts as one subject
 * (a real token when auth is on, nothing when it is off), short writes that
 * assert their success, and Link paging over object lists.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Message } from '../../src/domain/message.ts';
import type { Membership, ReadMarker, Room } from '../../src/domain/room.ts';
import { bearer, token } from '../auth/tokens.ts';
import type { ContractApp } from '../http/http-contract.ts';

export type Response = LightMyRequestResponse;
type Headers = Record<string, string>;

/** One subject talking to the app: with auth on it sends its own token, with auth off none. */
export class Caller {
  constructor(
    readonly app: ContractApp,
    readonly sub: string,
    readonly auth: Headers,
  ) {}

  request(
    method: string,
    url: string,
    payload?: unknown,
    headers: Headers = {},
  ): Promise<Response> {
    return this.app.inject({
      method: method as 'GET',
      url,
      headers: { ...this.auth, ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  }

  get(url: string, headers?: Headers): Promise<Response> {
    return this.request('GET', url, undefined, headers);
  }

  put(url: string, payload?: unknown, headers?: Headers): Promise<Response> {
    return this.request('PUT', url, payload, headers);
  }

  delete(url: string, headers?: Headers): Promise<Response> {
    return this.request('DELETE', url, undefined, headers);
  }

  /** POST /api/messages as this subject, asserting 201. */
  async post(
    room: string,
    content = 'hello',
    extra: Record<string, unknown> = {},
  ): Promise<Message> {
    const response = await this.request('POST', '/api/messages', {
      author: this.sub,
      content,
      room,
      ...extra,
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json<Message>();
  }

  /** PUT /api/rooms/{name}, asserting 201 or 200. */
  async putRoom(name: string, body: Record<string, unknown> = {}): Promise<Room> {
    const response = await this.put(roomPath(name), body);
    assert.ok([200, 201].includes(response.statusCode), response.body);
    return response.json<Room>();
  }

  /** PUT /api/rooms/{name}/members/{subject}, asserting 201 or 200. */
  async putMember(
    name: string,
    subject: string,
    body: Record<string, unknown> = {},
  ): Promise<Membership> {
    const response = await this.put(memberPath(name, subject), body);
    assert.ok([200, 201].includes(response.statusCode), response.body);
    return response.json<Membership>();
  }

  /** GET, asserting 200; the body. */
  async read<T>(url: string): Promise<T> {
    const response = await this.get(url);
    assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    return response.json<T>();
  }

  marker(name: string, subject = this.sub): Promise<ReadMarker> {
    return this.read<ReadMarker>(markerPath(name, subject));
  }

  /** PUT the read marker, asserting 200. */
  async setMarker(name: string, lastRead: string, headers?: Headers): Promise<ReadMarker> {
    const response = await this.put(markerPath(name, this.sub), { lastRead }, headers);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<ReadMarker>();
  }
}

/** A caller for `sub`: a real HS256 token (with the admin role when asked) when `auth`, none otherwise. */
export async function callerFor(
  app: ContractApp,
  auth: boolean,
  sub: string,
  admin = false,
): Promise<Caller> {
  if (!auth) return new Caller(app, sub, {});
  const jwt = await token({ sub, claims: admin ? { roles: ['admin'] } : {} });
  return new Caller(app, sub, bearer(jwt));
}

export const roomPath = (name: string) => `/api/rooms/${encodeURIComponent(name)}`;
export const membersPath = (name: string) => `${roomPath(name)}/members`;
export const memberPath = (name: string, subject: string) =>
  `${membersPath(name)}/${encodeURIComponent(subject)}`;
export const markerPath = (name: string, subject: string) =>
  `${roomPath(name)}/read-markers/${encodeURIComponent(subject)}`;
export const userRoomsPath = (subject: string) => `/api/users/${encodeURIComponent(subject)}/rooms`;

/** The app's base URL on a real socket, listening on first use. */
export async function baseUrl(app: ContractApp): Promise<string> {
  if (app.t.url === '') await app.t.listen();
  return app.t.url;
}

/** The strong ETag of a version. */
export const etag = (version: number) => `"${version}"`;

/** The Event-Seq header of a list response, as a number. */
export function eventSeqOf(response: Response): number {
  const value = response.headers['event-seq'];
  assert.match(String(value), /^\d+$/, 'Event-Seq is a non-negative integer');
  return Number(value);
}

/** Follows Link rel="next" from `url` to the end; every page's items in order and the number of pages. */
export async function walkPages<T>(
  caller: Caller,
  url: string,
): Promise<{ items: T[]; pages: number; urls: string[] }> {
  const items: T[] = [];
  const urls: string[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    urls.push(next);
    assert.ok(urls.length < 1000, 'paging ends');
    const response = await caller.get(next);
    assert.equal(response.statusCode, 200, `${next}: ${response.body}`);
    items.push(...response.json<T[]>());
    const link = response.headers.link as string | undefined;
    if (link === undefined) break;
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    assert.ok(match, `Link is <url>; rel="next": ${link}`);
    next = match[1];
  }
  return { items, pages: urls.length, urls };
}

/** Sorts strings by Unicode code point (not UTF-16 code unit): the order every list promises. */
export function byCodePoint(values: readonly string[]): string[] {
  const key = (s: string) => [...s].map((c) => c.codePointAt(0)!);
  return [...values].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) return x[i]! - y[i]!;
    }
    return x.length - y.length;
  });
}

/** A clock the test moves by hand (createdAt, updatedAt, activity order). */
export class ManualClock {
  #ms: number;
  constructor(start = '2030-01-01T00:00:00.000Z') {
    this.#ms = Date.parse(start);
  }
  readonly now = (): Date => new Date(this.#ms);
  advance(ms = 1000): void {
    this.#ms += ms;
  }
}
