/**
 * One open event stream. It keeps a single number, `position`: every change
 * at or below it has been sent (or filtered out by the room). From there it
 * moves on in one of two ways:
 *
 * - live: a feed batch that starts at or before `position` is sent straight
 *   away (only the changes above `position`, so nothing twice);
 * - catching up: otherwise (a replay, a batch that starts past `position`,
 *   or a client that could not keep up) it reads the gap from the change log
 *   itself, up to the feed's head, and only then goes live again.
 *
 * The feed hands out every change above its head, in order, and the change
 * log makes changes visible in sequence order on every engine, so the two
 * together leave no gap. Nothing is queued for a client: a client that does
 * not read stops the stream at MAX_BUFFERED_BYTES, the rest is read from the
 * log again once it drains, and a client that does not drain within the stall
 * timeout is dropped.
 *
 * With auth on, each change is judged when it is sent (room-access.ts
 * mayReceive) against the feed's access view, which has applied every change
 * up to the feed's head; so a stream never sends a change past the head (a
 * catch-up stops there and the feed's next batch brings the rest). A `?room=`
 * stream whose subject can no longer read the room ends after that change.
 */
import type { ServerResponse } from 'node:http';
import type { Actor } from '../domain/actor.ts';
import type { Change } from '../domain/change.ts';
import { judgedReader, mayReadNow, mayReceive, type AccessLookup } from '../domain/room-access.ts';
import type { ChangeBatch, ChangeFeed } from '../domain/change-feed.ts';
import { changeFrame, heartbeatFrame, resetFrame, type ResetReason } from './event-frames.ts';

/** Bytes a client may leave unread before the stream waits for it (its memory bound, plus one frame). */
export const MAX_BUFFERED_BYTES = 256 * 1024;
/** Changes read from the log per query while replaying or catching up. */
export const REPLAY_BATCH = 500;

export interface EventConnectionOptions {
  readonly res: ServerResponse;
  readonly feed: ChangeFeed;
  /** Only this room's changes are sent (the position still moves on with every change). */
  readonly room: string | undefined;
  /** Who the stream is for (null with auth off: everything goes). */
  readonly actor: Actor | null;
  /** Who may read which room, as of the feed's head. */
  readonly access: AccessLookup;
  readonly heartbeatMs: number;
  /** How long a client may leave a full buffer unread before it is dropped. */
  readonly stallTimeoutMs: number;
  readonly onError: (error: unknown) => void;
  /** Called once, when the connection is gone for whatever reason. */
  readonly onClosed: () => void;
  /** Called when the client is dropped for not reading. */
  readonly onDropped: () => void;
}

type Mode = 'live' | 'catching-up' | 'stalled' | 'closed';

export class EventConnection {
  readonly #o: EventConnectionOptions;
  #position = 0;
  /** The last `id:` the client was sent: heartbeats send the position when it is ahead of this. */
  #lastId = 0;
  #mode: Mode = 'catching-up';
  #unsubscribe: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #stallTimer: NodeJS.Timeout | undefined;
  #resumeAfterDrain: (() => void) | undefined;
  #begun = false;

  /** Whether changes are judged by the access view (a signed-in non-admin); else all go. */
  readonly #judges: boolean;

  constructor(options: EventConnectionOptions) {
    this.#o = options;
    this.#judges = judgedReader(options.actor) !== null;
    options.res.once('close', () => this.#closed());
  }

  /** Ended (or never began) and gone. */
  get closed(): boolean {
    return this.#mode === 'closed';
  }

  /** Waiting for the client to read what it was sent. */
  get stalled(): boolean {
    return this.#mode === 'stalled';
  }

  /**
   * Starts after the opening frame was written. `start` is where the client is;
   * `first` is a batch already read from the log after it; `reset` sends a reset
   * first and starts at that change instead. `told`: the client sent `start` as
   * its last event id; else (a stream opened without one) the first heartbeat
   * carries it, so that a client of a quiet room can resume from it.
   */
  begin(
    start: number,
    first: readonly Change[],
    reset?: { latest: number; reason: ResetReason },
    told = true,
  ) {
    if (this.#mode === 'closed') return;
    this.#begun = true;
    this.#position = start;
    this.#lastId = told ? start : -1;
    this.#unsubscribe = this.#o.feed.subscribe(this.#onBatch);
    this.#heartbeat = setInterval(() => this.#beat(), this.#o.heartbeatMs);
    if (reset !== undefined) {
      this.#sendReset(reset.latest, reset.reason);
      void this.#catchUp([]);
    } else {
      void this.#catchUp(first);
    }
  }

  /** Ends the stream cleanly (shutdown, store failure): the client reconnects with its last id. */
  end(): void {
    if (this.#mode === 'closed') return;
    if (!this.#begun) {
      // Nothing was sent yet: the request handler answers (see `closed`).
      this.#closed();
      return;
    }
    const { res } = this.#o;
    const socket = res.socket;
    // Once the end is flushed, close the connection too: a stream's connection is not reused.
    res.end(() => socket?.destroy());
    setTimeout(() => socket?.destroy(), 1000).unref();
    this.#closed();
  }

  #onBatch = (batch: ChangeBatch): void => {
    if (this.#mode !== 'live') return;
    // The access view is not loaded (it missed changes, and its load failed): read the batch
    // from the log once it is, rather than judge by a view that calls every room private.
    if (batch.after > this.#position || (this.#judges && this.#o.feed.settling !== undefined)) {
      void this.#catchUp([]);
      return;
    }
    for (const change of batch.changes) {
      if (change.seq <= this.#position) continue;
      if (this.#send(change)) {
        void this.#catchUp([]);
        return;
      }
    }
  };

  /** Sends `pending`, then reads the log until the feed's head, then goes live. */
  async #catchUp(pending: readonly Change[]): Promise<void> {
    this.#mode = 'catching-up';
    let batch = pending;
    try {
      if (!(await this.#drained())) return;
      for (;;) {
        let pastHead = false;
        for (const change of batch) {
          if (change.seq <= this.#position) continue;
          // Past the head the access view has not seen it yet: the feed's next batch brings it.
          if (change.seq > this.#o.feed.head) {
            pastHead = true;
            break;
          }
          // A follower reset after a failure answers nothing until it is loaded again: judged by
          // it, a change this subject may read would be left out for good.
          const settling = this.#judges ? this.#o.feed.settling : undefined;
          if (settling !== undefined) {
            await settling;
            if ((this.#mode as Mode) === 'closed') return;
          }
          if (this.#send(change) && !(await this.#drained())) return;
        }
        if ((this.#mode as Mode) === 'closed') return;
        // Going live is synchronous with this check: a later batch that starts past the
        // position sends the stream back here, to read the gap.
        if (pastHead || this.#position >= this.#o.feed.head) break;
        batch = await this.#o.feed.changesSince(this.#position, REPLAY_BATCH);
        if ((this.#mode as Mode) === 'closed') return;
        if (batch.length === 0) break;
        if (batch[0]!.seq !== this.#position + 1 && (await this.#purgedPastPosition())) {
          batch = [];
        }
      }
      this.#mode = 'live';
    } catch (error) {
      this.#o.onError(error);
      this.end();
    }
  }

  /**
   * A gap in the sequence is normal (a rolled-back write used a number), but
   * it can also mean the log was purged past us: then the client reloads.
   */
  async #purgedPastPosition(): Promise<boolean> {
    const bounds = await this.#o.feed.bounds();
    if (bounds.purgedThrough <= this.#position || this.#mode === 'closed') return false;
    this.#sendReset(bounds.latest, 'purged');
    return true;
  }

  #sendReset(latest: number, reason: ResetReason): void {
    this.#o.res.write(resetFrame(latest, reason));
    this.#position = latest;
    this.#lastId = latest;
  }

  /**
   * Writes one change if its room matches and its subject may receive it, and
   * ends a `?room=` stream whose subject can no longer read the room; true
   * when the client's buffer is over the bound.
   */
  #send(change: Change): boolean {
    if (this.#mode === 'closed') return false;
    this.#position = change.seq;
    const { room, actor, access } = this.#o;
    if (room !== undefined && change.room !== room) return false;
    const frame = mayReceive(actor, change, access) ? changeFrame(change) : undefined;
    if (frame !== undefined) {
      this.#lastId = change.seq;
      this.#o.res.write(frame);
    }
    // Also when the change itself was left out: a name that came into being as a private
    // room takes the access away without anything this subject may be sent.
    if (room !== undefined && !mayReadNow(actor, room, access)) {
      // The client resumes from here if it gets the room back (no change twice, none lost).
      if (this.#position > this.#lastId) this.#o.res.write(heartbeatFrame(this.#position));
      this.end();
      return false;
    }
    return this.#o.res.writableLength > MAX_BUFFERED_BYTES;
  }

  /** Waits until the client has read what it was sent; false (and the stream dropped) if it does not in time. */
  #drained(): Promise<boolean> {
    const { res } = this.#o;
    if (res.writableLength <= MAX_BUFFERED_BYTES) return Promise.resolve(true);
    this.#mode = 'stalled';
    return new Promise<boolean>((resolve) => {
      const onDrain = () => {
        clearTimeout(this.#stallTimer);
        this.#resumeAfterDrain = undefined;
        if (this.#mode === 'closed') return resolve(false);
        this.#mode = 'catching-up';
        resolve(true);
      };
      this.#resumeAfterDrain = () => {
        res.off('drain', onDrain);
        resolve(false);
      };
      res.once('drain', onDrain);
      this.#stallTimer = setTimeout(() => {
        // It has not read for a whole stall period: drop it rather than hold its data.
        this.#o.onDropped();
        res.destroy();
      }, this.#o.stallTimeoutMs);
    });
  }

  #beat(): void {
    if (this.#mode === 'stalled' || this.#mode === 'closed') return;
    const id = this.#position > this.#lastId ? this.#position : undefined;
    this.#o.res.write(heartbeatFrame(id));
    if (id !== undefined) this.#lastId = id;
  }

  #closed(): void {
    if (this.#mode === 'closed') return;
    this.#mode = 'closed';
    this.#unsubscribe?.();
    clearInterval(this.#heartbeat);
    clearTimeout(this.#stallTimer);
    this.#resumeAfterDrain?.();
    this.#o.onClosed();
  }
}
