/** What the reaction tests share: their paths, percent-encoded, and short writes that assert success. */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { Reaction, ReactionSummary } from '../../src/domain/reaction.ts';
import { uniqueRoom } from '../http/http-contract.ts';
import { baseUrl, type Caller } from '../rooms/rooms-support.ts';

export const reactionsPath = (id: string) => `/api/messages/${id}/reactions`;
export const emojiPath = (id: string, emoji: string) =>
  `${reactionsPath(id)}/${encodeURIComponent(emoji)}`;
export const reactionPath = (id: string, emoji: string, subject: string) =>
  `${emojiPath(id, emoji)}/${encodeURIComponent(subject)}`;
export const batchPath = (ids: readonly string[]) =>
  `/api/reactions?${ids.map((id) => `messageId=${id}`).join('&')}`;

/** PUT the caller's own reaction (no body), asserting 201 or 200; the reaction. */
export async function react(
  caller: Caller,
  id: string,
  emoji: string,
  status: 200 | 201 = 201,
): Promise<Reaction> {
  const response = await caller.put(reactionPath(id, emoji, caller.sub));
  assert.equal(response.statusCode, status, response.body);
  return response.json<Reaction>();
}

/** GET the message's summary, asserting 200. */
export function summary(caller: Caller, id: string): Promise<ReactionSummary[]> {
  return caller.read<ReactionSummary[]>(reactionsPath(id));
}

/**
 * The access tests' cast with auth on: ada's private room `hidden` with carol
 * a member and ada's message `secret` in it, ada's message `open` in a public
 * room; bob is no member, root an admin.
 */
export async function privateScene(as: (sub: string, admin?: boolean) => Promise<Caller>) {
  const [ada, bob, carol, root] = [
    await as('ada'),
    await as('bob'),
    await as('carol'),
    await as('root', true),
  ];
  const hidden = uniqueRoom();
  await ada.putRoom(hidden, { visibility: 'private' });
  await ada.putMember(hidden, 'carol');
  const secret = await ada.post(hidden, 'secret');
  const open = await ada.post(uniqueRoom(), 'open');
  return { ada, bob, carol, root, hidden, secret, open };
}

/**
 * One request with its path sent verbatim on a socket: URL parsers (fetch's,
 * inject's) would resolve %2E and %2E%2E as dot segments before it left.
 */
export async function rawRequest(
  caller: Caller,
  method: string,
  path: string,
): Promise<{ statusCode: number; body: string }> {
  const url = await baseUrl(caller.app);
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/`, { method, path, headers: caller.auth }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    request.end();
  });
}
