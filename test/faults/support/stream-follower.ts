/**
 * A client that follows the change stream across faults the way a browser
 * does: when a stream ends it reconnects (to whatever instance serves now)
 * with `Last-Event-ID`, and everything it received is then compared with the
 * change log: no gap, no duplicate, ids strictly increasing.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  openEventStream,
  type EventStreamClient,
  type StreamEnd,
  type StreamEvent,
} from './event-stream-client.ts';
import type { Change } from './write-ledger.ts';

export class StreamFollower {
  readonly #since: number;
  readonly #streams: EventStreamClient[] = [];
  readonly ends: StreamEnd[] = [];

  constructor(since: number) {
    this.#since = since;
  }

  get reconnects(): number {
    return Math.max(0, this.#streams.length - 1);
  }

  get events(): StreamEvent[] {
    return this.#streams.flatMap((s) => s.events);
  }

  get current(): EventStreamClient | undefined {
    return this.#streams.at(-1);
  }

  /** The last id this client has seen, as EventSource keeps it. */
  get lastEventId(): string {
    for (let i = this.#streams.length - 1; i >= 0; i--) {
      const id = this.#streams[i]!.lastEventId;
      if (id !== '') return id;
    }
    return String(this.#since);
  }

  /** Connects (first time: `?since=`; later: `Last-Event-ID`) unless a stream is still open. */
  async connect(base: string): Promise<EventStreamClient> {
    const open = this.current;
    if (open?.isOpen) return open;
    const stream =
      this.#streams.length === 0
        ? await openEventStream(base, { query: `?since=${this.#since}` })
        : await openEventStream(base, { lastEventId: this.lastEventId });
    if (stream.status !== 200) throw new Error(`GET /api/events answered ${stream.status}`);
    this.#streams.push(stream);
    void stream.ended.then((end) => this.ends.push(end));
    return stream;
  }

  /** Waits until this client has seen change `seq` (reconnecting to `base` if its stream ended). */
  async catchUp(base: string, seq: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Number(this.lastEventId) < seq) {
      const stream = await this.connect(base);
      await stream
        .waitFor(() => Number(this.lastEventId) >= seq, Math.max(1, deadline - Date.now()))
        .catch((error: Error) => {
          if (stream.isOpen || Date.now() >= deadline) throw error;
        });
    }
  }

  close(): void {
    for (const stream of this.#streams) stream.close();
  }

  /** What differs between the events received and the log (after `since`); empty when none. */
  differences(log: readonly Change[]): string[] {
    const problems: string[] = [];
    const received = this.events.filter((e) => e.event.startsWith('message.'));
    let previous = this.#since;
    for (const e of this.events) {
      if (Number(e.id) <= previous) problems.push(`event ${e.id} (${e.event}) after ${previous}`);
      previous = Number(e.id);
    }
    const expected = log.filter((c) => c.seq > this.#since && c.seq <= previous);
    const got = new Map(received.map((e) => [Number(e.id), e]));
    for (const change of expected) {
      const event = got.get(change.seq);
      if (event === undefined) problems.push(`change ${change.seq} never arrived`);
      else if (
        event.event !== change.kind ||
        !isDeepStrictEqual(JSON.parse(event.data), change.message)
      ) {
        problems.push(`change ${change.seq} arrived as ${event.event} ${event.data}`);
      }
    }
    if (received.length !== expected.length) {
      problems.push(`${received.length} events for ${expected.length} changes`);
    }
    return problems;
  }
}
