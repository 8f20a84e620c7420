/**
 * A small Server-Sent Events client over a real socket, parsing frames the
 * way the WHATWG EventSource does (line ends CR, LF or CRLF; `id:` sets the
 * last event id even when no event is dispatched), and keeping everything it
 * saw so tests can assert on framing, not just on events.
 */
import http from 'node:http';
import type { Message } from '../../src/domain/message.ts';

export interface SseEvent {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

export interface SseClient {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Dispatched events, in order (reset included). */
  readonly events: SseEvent[];
  /** Comment lines (without the colon). */
  readonly comments: string[];
  /** Every value the last event id took, in order (ids of events and of id-only frames). */
  readonly ids: string[];
  readonly lastEventId: string;
  readonly retry: number | undefined;
  /** Raw text received so far. */
  readonly raw: string;
  readonly ended: boolean;
  /** Resolves once `predicate` holds; rejects after `timeoutMs` (a bound, not a measurement). */
  waitFor(predicate: (c: SseClient) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** The body of a non-200 answer. */
  body(): Promise<string>;
  close(): void;
  readonly request: http.ClientRequest;
  readonly response: http.IncomingMessage;
}

export interface ConnectOptions {
  readonly headers?: Record<string, string>;
  /** Do not read the body at all (a client that stops reading). */
  readonly paused?: boolean;
  /** The client's own address (any of 127.0.0.0/8 on loopback): another client to the server. */
  readonly localAddress?: string;
}

const DEFAULT_WAIT_MS = 10_000;

export function connectSse(url: string, options: ConnectOptions = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, {
      headers: { accept: 'text/event-stream', ...options.headers },
      ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const waiters = new Set<() => void>();
      let buffer = '';
      let data: string[] = [];
      let eventType = '';
      let idBuffer = '';
      let raw = '';
      const client: SseClient & {
        lastEventId: string;
        retry: number | undefined;
        raw: string;
        ended: boolean;
      } = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events: [],
        comments: [],
        ids: [],
        lastEventId: '',
        retry: undefined,
        raw: '',
        ended: false,
        request,
        response,
        waitFor(predicate, what, timeoutMs = DEFAULT_WAIT_MS) {
          if (predicate(client)) return Promise.resolve();
          return new Promise((ok, fail) => {
            const check = () => {
              if (!predicate(client)) return;
              clearTimeout(timer);
              waiters.delete(check);
              ok();
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(
                new Error(`timed out waiting for ${what}; received:\n${client.raw.slice(-2000)}`),
              );
            }, timeoutMs);
            waiters.add(check);
          });
        },
        body() {
          return new Promise((ok) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => ok(text));
          });
        },
        close() {
          request.destroy();
        },
      };
      const notify = () => {
        client.raw = raw;
        for (const waiter of [...waiters]) waiter();
      };
      const line = (text: string) => {
        if (text === '') {
          client.lastEventId = idBuffer;
          if (data.length > 0) {
            client.events.push({
              id: idBuffer,
              event: eventType || 'message',
              data: data.join('\n'),
            });
          }
          data = [];
          eventType = '';
          return;
        }
        if (text.startsWith(':')) {
          client.comments.push(text.slice(1).trim());
          return;
        }
        const colon = text.indexOf(':');
        const field = colon === -1 ? text : text.slice(0, colon);
        let value = colon === -1 ? '' : text.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') data.push(value);
        else if (field === 'event') eventType = value;
        else if (field === 'id' && !value.includes('\0')) {
          idBuffer = value;
          client.ids.push(value);
        } else if (field === 'retry' && /^\d+$/.test(value)) client.retry = Number(value);
      };
      if (response.statusCode !== 200) {
        resolve(client);
        return;
      }
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        for (;;) {
          const match = /\r\n|\n|\r/.exec(buffer);
          // A lone CR at the end may be the first half of CRLF: wait for more.
          if (match === null || (match[0] === '\r' && match.index === buffer.length - 1)) break;
          line(buffer.slice(0, match.index));
          buffer = buffer.slice(match.index + match[0].length);
        }
        notify();
      });
      const finish = () => {
        client.ended = true;
        notify();
      };
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
      if (options.paused === true) response.pause();
      resolve(client);
    });
  });
}

/** The change events among `events` (no reset), with their ids as numbers. */
export function changeEvents(client: SseClient): { seq: number; event: string; data: Message }[] {
  return client.events
    .filter((e) => e.event.startsWith('message.'))
    .map((e) => ({ seq: Number(e.id), event: e.event, data: JSON.parse(e.data) as Message }));
}
