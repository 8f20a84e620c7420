/**
 * A small Server-Sent Events client (WHATWG parsing rules) that records
 * every event and how the stream ended: cleanly (end of stream on an event
 * boundary) or cut (in the middle of an event, or a network error).
 */
export interface StreamEvent {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

export type StreamEnd = { readonly how: 'clean' } | { readonly how: 'cut'; readonly why: string };

export interface EventStreamClient {
  readonly status: number;
  readonly events: StreamEvent[];
  /** The last `id:` seen (events and heartbeats), as EventSource keeps it. */
  readonly lastEventId: string;
  readonly ended: Promise<StreamEnd>;
  readonly isOpen: boolean;
  close(): void;
  /** Resolves once `predicate` holds for the events so far; rejects after `timeoutMs`. */
  waitFor(predicate: (events: readonly StreamEvent[]) => boolean, timeoutMs: number): Promise<void>;
}

export async function openEventStream(
  base: string,
  options: { readonly lastEventId?: string; readonly query?: string } = {},
): Promise<EventStreamClient> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const response = await fetch(`${base}/api/events${options.query ?? ''}`, {
    headers,
    signal: controller.signal,
  });
  const events: StreamEvent[] = [];
  let lastEventId = options.lastEventId ?? '';
  let open = response.ok && response.body !== null;
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());

  let buffer = '';
  let pending: { id?: string; event: string; data: string[] } = { event: '', data: [] };
  let dirty = false; // a field was read since the last dispatch
  const line = (text: string) => {
    if (text === '') {
      if (pending.id !== undefined) lastEventId = pending.id;
      if (pending.data.length > 0) {
        events.push({
          id: lastEventId,
          event: pending.event === '' ? 'message' : pending.event,
          data: pending.data.join('\n'),
        });
      }
      pending = { event: '', data: [] };
      dirty = false;
      return;
    }
    if (text.startsWith(':')) return;
    dirty = true;
    const at = text.indexOf(':');
    const field = at === -1 ? text : text.slice(0, at);
    let value = at === -1 ? '' : text.slice(at + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id' && !value.includes('\0')) pending.id = value;
    else if (field === 'event') pending.event = value;
    else if (field === 'data') pending.data.push(value);
  };

  const ended: Promise<StreamEnd> = (async () => {
    if (!open) {
      await response.text().catch(() => undefined);
      return { how: 'cut', why: `status ${response.status}` };
    }
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (;;) {
          const match = /\r\n|\r|\n/.exec(buffer);
          // A lone CR at the end may be the first half of CRLF: wait for more.
          if (match === null || (match[0] === '\r' && match.index === buffer.length - 1)) break;
          line(buffer.slice(0, match.index));
          buffer = buffer.slice(match.index + match[0].length);
        }
        notify();
      }
      const clean = buffer === '' && !dirty;
      return clean ? { how: 'clean' } : { how: 'cut', why: 'stream ended inside an event' };
    } catch (error) {
      if (controller.signal.aborted) return { how: 'clean' };
      const e = error as Error & { cause?: { code?: string } };
      return { how: 'cut', why: e.cause?.code ?? e.message };
    } finally {
      open = false;
      notify();
    }
  })();

  return {
    status: response.status,
    events,
    get lastEventId() {
      return lastEventId;
    },
    get isOpen() {
      return open;
    },
    ended,
    close: () => controller.abort(),
    waitFor: (predicate, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (predicate(events)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          } else if (!open) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`stream ended before the awaited events (${events.length} received)`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`awaited events did not come within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}
