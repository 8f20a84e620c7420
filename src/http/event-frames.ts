/**
 * The text of Server-Sent Events frames (WHATWG HTML, section 9.2). Only
 * numbers and the known change kinds ever reach the `id:` and `event:` lines;
 * `data:` is the change's JSON text, in which JSON escapes every CR and LF, so
 * nothing a client sent can start a line of its own (a text that holds one
 * anyway is not sent).
 */
import { CHANGE_KINDS, type Change, type ChangeKind } from '../domain/change.ts';

const KINDS: ReadonlySet<ChangeKind> = new Set(CHANGE_KINDS);
const LINE_BREAK = /[\r\n]/;

// Shared by every stream that sends the same change: one JSON.stringify per change, not per client.
const frames = new WeakMap<Change, string>();

/** The frame of one change, or undefined for a kind this version does not know (it is skipped). */
export function changeFrame(change: Change): string | undefined {
  let frame = frames.get(change);
  if (frame === undefined) {
    if (!KINDS.has(change.kind) || !Number.isSafeInteger(change.seq)) return undefined;
    if (LINE_BREAK.test(change.data)) return undefined;
    frame = `id: ${change.seq}\nevent: ${change.kind}\ndata: ${change.data}\n\n`;
    frames.set(change, frame);
  }
  return frame;
}

export type ResetReason = 'purged' | 'ahead';

/** Tells the client to reload: `since` is older than the log keeps, or newer than its latest change. */
export function resetFrame(latest: number, reason: ResetReason): string {
  return `id: ${latest}\nevent: reset\ndata: ${JSON.stringify({ latest, reason })}\n\n`;
}

/** The opening: how long a client waits before reconnecting, and a comment so proxies see bytes at once. */
export function openingFrame(retryMs: number): string {
  return `retry: ${retryMs}\n: stream open\n\n`;
}

/** A keep-alive comment; with `id`, it also moves the client's last event id on (no event is dispatched). */
export function heartbeatFrame(id: number | undefined): string {
  return id === undefined ? ': heartbeat\n\n' : `: heartbeat\nid: ${id}\n\n`;
}
