/**
 * Following GET /api/events over fetch, as a browser's EventSource would but
 * from any runtime and with headers: the stream is parsed as the WHATWG HTML
 * spec says (section 9.2), and a dropped connection is resumed with
 * `Last-Event-ID`, so the caller sees every change once, in commit order.
 */
import type { components } from './openapi.ts';
import { ProblemError, problemFrom } from './problem.ts';
import { retryDelayMs, sleep } from './retry.ts';

type StreamEvent = components['schemas']['StreamEvent'];

export interface EventsOptions {
  /** Only the changes of this room. */
  readonly room?: string;
  /**
   * Resume after this change sequence number: the `id` of the last event
   * handled, or a list's `Event-Seq`. Without it the stream starts now.
   */
  readonly lastEventId?: string | number;
  /** Aborting it ends the iteration. */
  readonly signal?: AbortSignal;
  /** Told every new last event id, heartbeats' included (to keep it across restarts). */
  readonly onLastEventId?: (id: string) => void;
}

type Send = (url: string, init: RequestInit) => Promise<Response>;

/** How long to wait before reconnecting until the stream's `retry:` says otherwise. */
const DEFAULT_RETRY_MS = 2000;

export async function* followEvents(
  send: Send,
  baseUrl: string,
  options: EventsOptions,
): AsyncGenerator<StreamEvent, void, undefined> {
  const { signal } = options;
  // A function, not a test of the property: it changes while we wait.
  const aborted = () => signal?.aborted === true;
  let lastEventId = options.lastEventId === undefined ? undefined : String(options.lastEventId);
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  const url = new URL('/api/events', `${baseUrl}/`);
  if (options.room !== undefined) url.searchParams.set('room', options.room);

  while (!aborted()) {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    let response: Response;
    try {
      response = await send(url.href, { headers, ...(signal === undefined ? {} : { signal }) });
    } catch {
      if (aborted()) return;
      failures += 1;
      await sleep(retryDelayMs(undefined, failures), signal);
      continue;
    }
    if (response.status !== 200) {
      const body: unknown = await response.json().catch(() => undefined);
      // Busy or away: try again later. Anything else (401, 403, 400) will not change by waiting.
      if (response.status !== 429 && response.status < 500) {
        throw new ProblemError(response, problemFrom(body));
      }
      failures += 1;
      await sleep(retryDelayMs(response.headers.get('retry-after'), failures), signal);
      continue;
    }
    failures = 0;
    try {
      for await (const field of sseFields(response.body)) {
        if (field.kind === 'retry') retryMs = field.ms;
        else if (field.kind === 'id') {
          lastEventId = field.id;
          options.onLastEventId?.(field.id);
        } else {
          yield {
            id: field.id ?? lastEventId ?? '',
            event: field.event,
            data: JSON.parse(field.data) as unknown,
          } as StreamEvent;
        }
      }
    } catch {
      // The connection dropped (or the data was not JSON): reconnect from the last id.
    }
    if (aborted()) return;
    await sleep(retryMs, signal);
  }
}

type Field =
  | { readonly kind: 'id'; readonly id: string }
  | { readonly kind: 'retry'; readonly ms: number }
  | { readonly kind: 'event'; readonly event: string; readonly data: string; readonly id?: string };

/** The id, retry and dispatched events of an SSE body, in order. */
export async function* sseFields(body: ReadableStream<Uint8Array> | null): AsyncGenerator<Field> {
  if (body === null) return;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return; // An event not closed by a blank line is dropped, as the spec says.
      buffer += value;
      for (;;) {
        const end = /\r\n|\r|\n/.exec(buffer);
        // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
        if (end === null || (end[0] === '\r' && end.index === buffer.length - 1)) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        if (line === '') {
          if (data.length > 0) {
            const name = event === '' ? 'message' : event;
            yield {
              kind: 'event',
              event: name,
              data: data.join('\n'),
              ...(id === undefined ? {} : { id }),
            };
          }
          event = '';
          data = [];
          id = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const name = colon === -1 ? line : line.slice(0, colon);
        let text = colon === -1 ? '' : line.slice(colon + 1);
        if (text.startsWith(' ')) text = text.slice(1);
        if (name === 'event') event = text;
        else if (name === 'data') data.push(text);
        else if (name === 'id' && !text.includes('\0')) {
          id = text;
          yield { kind: 'id', id: text };
        } else if (name === 'retry' && /^[0-9]+$/.test(text)) {
          yield { kind: 'retry', ms: Number(text) };
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
