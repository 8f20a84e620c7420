/**
 * A typed client for the message service: `api` is openapi-fetch over the
 * types generated from the service's OpenAPI document (every path, parameter
 * and body typed), and the methods around it are what every client of this
 * API ends up writing: follow `Link` pages, edit with `If-Match`, retry a
 * create under one `Idempotency-Key`, follow the event stream.
 */
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './openapi.ts';
import { followEvents, type EventsOptions } from './events.ts';
import { ProblemError, problemFrom } from './problem.ts';
import { retryDelayMs, sleep } from './retry.ts';

export type { components, operations, paths } from './openapi.ts';
export { ProblemError } from './problem.ts';
export type { EventsOptions } from './events.ts';

type Schemas = components['schemas'];
export type Message = Schemas['Message'];
export type CreateMessage = Schemas['CreateMessage'];
export type UpdateMessage = Schemas['UpdateMessage'];
export type Room = Schemas['Room'];
export type PutRoom = Schemas['PutRoom'];
export type Membership = Schemas['Membership'];
export type ReadMarker = Schemas['ReadMarker'];
export type UserRoom = Schemas['UserRoom'];
export type Problem = Schemas['Problem'];
/** One event of the stream, `data` typed by `event` (a union: switch on `event`). */
export type StreamEvent = Schemas['StreamEvent'];

export interface ClientOptions {
  /** Where the service is, e.g. `http://127.0.0.1:3000`. */
  readonly baseUrl: string;
  /** A bearer JWT, or a function that gives the current one (when the service has auth on). */
  readonly token?: string | (() => string | undefined | Promise<string | undefined>);
  /** The fetch to use (default: the global one); it is given a Request. */
  readonly fetch?: (request: Request) => Promise<Response>;
}

export interface CreateOptions {
  /** The key that makes retries safe; a random UUID when not given. */
  readonly idempotencyKey?: string;
  /** Tries in all, the first included (default 4). */
  readonly attempts?: number;
}

export interface EditOptions {
  /** Tries in all when the message changes between the read and the write (default 3). */
  readonly attempts?: number;
}

export class MessageServiceClient {
  /** Every operation of the document, typed: `api.GET('/api/rooms/{name}', { params: { path: { name } } })`. */
  readonly api: Client<paths>;
  readonly #baseUrl: string;
  readonly #token: ClientOptions['token'];
  readonly #fetch: (request: Request) => Promise<Response>;

  constructor(options: ClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.#fetch = options.fetch ?? ((request) => globalThis.fetch(request));
    this.api = createFetchClient<paths>({ baseUrl: this.#baseUrl, fetch: this.#fetch });
    this.api.use(this.#authorization());
  }

  /**
   * Every item of a list, page after page: yields the first page's items
   * (the answer of a typed call), then follows `Link: <...>; rel="next"`
   * until there is none.
   *
   *   for await (const m of client.pages(client.api.GET('/api/messages', { params: { query: { limit: 100 } } })))
   */
  async *pages<T>(
    first: Promise<{ data?: readonly T[]; error?: unknown; response: Response }>,
  ): AsyncGenerator<T, void, undefined> {
    const { data, error, response } = await first;
    if (data === undefined) throw new ProblemError(response, problemFrom(error));
    yield* data;
    let next = nextLink(response);
    while (next !== undefined) {
      const page = await this.#send(new URL(next, `${this.#baseUrl}/`).href);
      if (!page.ok) throw new ProblemError(page, problemFrom(await page.json().catch(() => null)));
      yield* (await page.json()) as T[];
      next = nextLink(page);
    }
  }

  /**
   * Creates a message, retrying under one Idempotency-Key when no answer came
   * (a network error), or the answer says to try again (409 while the first
   * try is in flight, 429, 503): the service stores it once, whatever happens.
   */
  async createMessage(
    body: CreateMessage,
    options: CreateOptions = {},
  ): Promise<{ message: Message; replayed: boolean; idempotencyKey: string }> {
    const idempotencyKey = options.idempotencyKey ?? globalThis.crypto.randomUUID();
    const attempts = options.attempts ?? 4;
    for (let attempt = 1; ; attempt++) {
      let result;
      try {
        result = await this.api.POST('/api/messages', {
          body,
          params: { header: { 'idempotency-key': idempotencyKey } },
        });
      } catch (error) {
        if (attempt >= attempts) throw error;
        await sleep(retryDelayMs(undefined, attempt));
        continue;
      }
      const { data, error, response } = result;
      if (data !== undefined) {
        const replayed = response.headers.get('idempotent-replayed') === 'true';
        return { message: data, replayed, idempotencyKey };
      }
      const problem = problemFrom(error);
      if (!isRetryable(response.status, problem) || attempt >= attempts) {
        throw new ProblemError(response, problem);
      }
      await sleep(retryDelayMs(response.headers.get('retry-after'), attempt));
    }
  }

  /**
   * Edits a message safely: reads it, computes the new content from what was
   * read, and writes it with `If-Match` on the ETag read. When someone else
   * changed it meanwhile (412), it reads again and recomputes.
   */
  async editMessage(
    id: string,
    edit: (current: Message) => string | Promise<string>,
    options: EditOptions = {},
  ): Promise<Message> {
    const attempts = options.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      const read = await this.api.GET('/api/messages/{id}', { params: { path: { id } } });
      if (read.data === undefined) throw new ProblemError(read.response, problemFrom(read.error));
      const etag = read.response.headers.get('etag') ?? `"${read.data.version}"`;
      const written = await this.api.PUT('/api/messages/{id}', {
        params: { path: { id }, header: { 'if-match': etag } },
        body: { content: await edit(read.data) },
      });
      if (written.data !== undefined) return written.data;
      if (written.response.status !== 412 || attempt >= attempts) {
        throw new ProblemError(written.response, problemFrom(written.error));
      }
    }
  }

  /**
   * Follows the change stream from `lastEventId` (or from now): yields every
   * event, reconnecting after a dropped connection with `Last-Event-ID` so
   * nothing is missed or repeated. A `reset` event means the stream could not
   * resume where asked: reload what you show, then go on (the stream already
   * has). Ends when `signal` aborts; a 4xx answer throws a ProblemError.
   */
  events(options: EventsOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return followEvents((url, init) => this.#send(url, init), this.#baseUrl, options);
  }

  async #send(url: string, init: RequestInit = {}): Promise<Response> {
    const request = new Request(url, init);
    const token = await this.#currentToken();
    if (token !== undefined) request.headers.set('authorization', `Bearer ${token}`);
    return this.#fetch(request);
  }

  async #currentToken(): Promise<string | undefined> {
    return typeof this.#token === 'function' ? await this.#token() : this.#token;
  }

  #authorization(): Middleware {
    return {
      onRequest: async ({ request }) => {
        const token = await this.#currentToken();
        if (token !== undefined) request.headers.set('authorization', `Bearer ${token}`);
        return request;
      },
    };
  }
}

export function createClient(options: ClientOptions): MessageServiceClient {
  return new MessageServiceClient(options);
}

/** The target of `rel="next"` in a Link header (RFC 8288), if any. */
export function nextLink(response: Response): string | undefined {
  const link = response.headers.get('link');
  if (link === null) return undefined;
  for (const part of link.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match !== null && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?/i.test(match[2]!)) {
      return match[1];
    }
  }
  return undefined;
}

/** Answers that say "not now": the first try still in flight, a spent budget, a store away. */
function isRetryable(status: number, problem: Problem | undefined): boolean {
  if (status === 409) return problem?.type === '/problems/idempotency-in-flight';
  return status === 429 || status === 503;
}
