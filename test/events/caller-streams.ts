/**
 * Event streams for the tests that act through a Caller (rooms, reactions):
 * streams opened over a real socket and closed with the suite, and a
 * sentinel: a later change every stream must receive, which proves that each
 * earlier one was delivered or skipped (so "nothing arrives" is never a timed
 * wait).
 */
import assert from 'node:assert/strict';
import { after } from 'node:test';
import type { Message } from '../../src/domain/message.ts';
import { uniqueRoom, type ContractApp } from '../http/http-contract.ts';
import { baseUrl, type Caller } from '../rooms/rooms-support.ts';
import { received, type Received } from './room-access-support.ts';
import { connectSse, type SseClient } from './sse-client.ts';

/** Opens streams on the suite's app as a caller; every one is closed after the suite. */
export function streams(app: () => ContractApp) {
  const open: SseClient[] = [];
  after(() => {
    for (const client of open) client.close();
  });
  return async (
    caller: Caller,
    path = '/api/events',
    localAddress?: string,
  ): Promise<SseClient> => {
    const client = await connectSse(`${await baseUrl(app())}${path}`, {
      headers: caller.auth,
      ...(localAddress === undefined ? {} : { localAddress }),
    });
    open.push(client);
    return client;
  };
}

/** Posts a message to a public room of its own and waits until each client has it. */
export function sentinel(poster: Caller, ...clients: SseClient[]): Promise<Message> {
  return sentinelIn(`sentinel-${uniqueRoom()}`, poster, ...clients);
}

/** Posts a message to `room` (for streams of that room only) and waits until each client has it. */
export async function sentinelIn(
  room: string,
  poster: Caller,
  ...clients: SseClient[]
): Promise<Message> {
  const message = await poster.post(room, 'sentinel');
  for (const client of clients) {
    await client.waitFor(
      (c) => received(c).some((e) => e.event === 'message.created' && e.data.id === message.id),
      'the sentinel',
    );
  }
  return message;
}

/** The changes a stream received before the sentinel. */
export function before(client: SseClient, mark: Message): Received[] {
  const all = received(client);
  const index = all.findIndex((e) => e.data.id === mark.id);
  assert.ok(index >= 0, 'the sentinel arrived');
  return all.slice(0, index);
}
