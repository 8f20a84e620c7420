/**
 * What clients were told, and the check that the store agrees.
 *
 * Load workers write through the real HTTP API and record every answer here:
 * a 2xx is a promise (the change is on disk), a 4xx is a promise that
 * nothing happened, and "no answer" (or a 5xx, where the mode says so) leaves
 * the operation pending: it must have happened fully or not at all. Each
 * message belongs to one worker, so its operations are sequential and the
 * expected state is exact. `verify` then reads the list, the change log and
 * the answers to retried idempotent creates, and counts every broken promise.
 */
import { isDeepStrictEqual } from 'node:util';
import { call, describeResult, json, type Answer, type CallResult } from './http-call.ts';

export interface Message {
  readonly id: string;
  readonly room: string;
  readonly author: string;
  readonly content: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: number;
  readonly replyTo: string | null;
}

export interface Change {
  readonly seq: number;
  readonly kind: string;
  readonly message: Message;
}

interface CreateBody {
  readonly author: string;
  readonly content: string;
  readonly room?: string;
}

type Pending =
  | { readonly op: 'create' }
  | { readonly op: 'edit'; readonly content: string }
  | { readonly op: 'delete' };

interface Tracked {
  readonly body: CreateBody;
  readonly key: string | undefined;
  /** The 201 the create was first answered with (what a replay must repeat). */
  firstAnswer: Message | undefined;
  /** The state the store must hold (undefined: not created yet, or gone). */
  current: Message | undefined;
  gone: boolean;
  pending: Pending | undefined;
  edits: number;
}

/** How the ledger reads a 503 or a request that got no answer. */
export interface LedgerMode {
  /**
   * 'unknown': it may have happened (crash, outage).
   * 'refused': it must not have happened (graceful shutdown refuses before processing).
   */
  readonly noAnswer: 'unknown' | 'refused';
  /** 503 (store unavailable, or stopping) and 507 (disk full). */
  readonly storeErrors: 'unknown' | 'refused' | 'anomaly';
}

export interface LedgerFigures {
  ackedWrites: number;
  ackedWritesChecked: number;
  lost: number;
  halfDone: number;
  duplicates: number;
  refused4xx: number;
  noAnswer: number;
  answered503: number;
  answered507: number;
  /** The longest wait for a 503 answer (a store that is down must not make clients hang). */
  slowest503Ms: number;
  replaysChecked: number;
  idempotentRetries: number;
  reads: number;
}

const ROOMS = ['general', 'ops', 'random'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export class WriteLedger {
  readonly figures: LedgerFigures = {
    ackedWrites: 0,
    ackedWritesChecked: 0,
    lost: 0,
    halfDone: 0,
    duplicates: 0,
    refused4xx: 0,
    noAnswer: 0,
    answered503: 0,
    answered507: 0,
    slowest503Ms: 0,
    replaysChecked: 0,
    idempotentRetries: 0,
    reads: 0,
  };
  /** Every broken promise, in words (the test fails if there is any). */
  readonly anomalies: string[] = [];
  readonly #tracked: Tracked[] = [];
  /** Contents that must never be stored (refused creates, creates known not to have happened). */
  readonly #neverStored = new Set<string>();
  /** Acked writes since the last verify: each is checked by the next one. */
  #uncheckedAcks = 0;
  readonly #mode: LedgerMode;
  readonly #runId: string;
  #counter = 0;

  constructor(mode: LedgerMode, runId: string) {
    this.#mode = mode;
    this.#runId = runId;
  }

  /** One client: sequential random operations on its own messages until `stop()` or no answer. */
  async runClient(base: string, client: number, random: () => number, stop: () => boolean) {
    const mine: Tracked[] = [];
    const author = `client-${client}`;
    while (!stop()) {
      const usable = mine.filter((m) => m.current !== undefined && m.pending === undefined);
      const pick = () => usable[Math.floor(random() * usable.length)]!;
      const r = random();
      let result: CallResult;
      if (usable.length < 3 || r < 0.36) {
        const keyed = random() < 0.5;
        const tracked = this.#newMessage(author, keyed, random);
        mine.push(tracked);
        result = await this.#create(base, tracked);
      } else if (r < 0.6) {
        result = await this.#edit(base, pick(), random() < 0.5);
      } else if (r < 0.68) {
        result = await this.#staleEdit(base, pick(), random() < 0.5);
      } else if (r < 0.8) {
        result = await this.#delete(base, pick(), random() < 0.5);
      } else if (r < 0.83) {
        result = await this.#staleDelete(base, pick());
      } else if (r < 0.9) {
        const keyed = usable.filter((m) => m.key !== undefined && m.firstAnswer !== undefined);
        if (keyed.length === 0) continue;
        result = await this.#replayOrReuse(
          base,
          keyed[Math.floor(random() * keyed.length)]!,
          random() < 0.6,
        );
      } else if (r < 0.94) {
        result = await this.#refusedCreate(base, author);
      } else {
        result = await this.#read(base, pick());
      }
      if (!result.answered) return;
    }
  }

  /** One tracked create (a probe), checked like every other write. */
  createOne(
    base: string,
    author: string,
    keyed: boolean,
    random: () => number,
    padding = '',
  ): Promise<CallResult> {
    return this.#create(base, this.#newMessage(author, keyed, random, padding));
  }
  /** Reads everything back and checks every promise; resolves what was pending. */
  async verify(
    base: string,
    readChangeLog: (base: string, eventSeq: number) => Promise<Change[]>,
  ): Promise<void> {
    // Retried idempotent creates first: a client that got no answer retries with the same key.
    for (const t of this.#tracked) {
      if (t.pending?.op !== 'create' || t.key === undefined) continue;
      const retry = await this.#post(base, t.body, t.key);
      this.figures.idempotentRetries += 1;
      if (!retry.answered || retry.status === 409 || retry.status === 503) continue; // still in flight
      if (retry.status !== 201) {
        this.#anomaly(`retried create ${t.key}: ${describeResult(retry)}`);
        continue;
      }
      const message = json<Message>(retry);
      t.pending = undefined;
      t.firstAnswer = message;
      t.current = message;
      this.#ack();
    }

    const listed = await call(base, 'GET', '/api/messages');
    if (!listed.answered || listed.status !== 200) {
      this.#anomaly(`list: ${describeResult(listed)}`);
      return;
    }
    const list = json<Message[]>(listed);
    const eventSeq = Number(listed.headers.get('event-seq'));
    const byId = new Map(list.map((m) => [m.id, m]));
    const byContent = new Map<string, Message[]>();
    for (const m of list) byContent.set(m.content, [...(byContent.get(m.content) ?? []), m]);
    for (const [content, found] of byContent) {
      if (found.length > 1) {
        this.figures.duplicates += found.length - 1;
        this.#anomaly(`${found.length} messages with the same content ${JSON.stringify(content)}`);
      }
      if (this.#neverStored.has(content)) {
        this.figures.halfDone += 1;
        this.#anomaly(`a create that was refused or never happened is stored: ${content}`);
      }
    }

    const known = new Set<string>();
    for (const t of this.#tracked) this.#check(t, byId, byContent, known);
    for (const m of list) {
      if (!known.has(m.id)) this.#anomaly(`an unknown message is stored: ${JSON.stringify(m)}`);
    }

    const changes = await readChangeLog(base, eventSeq);
    this.#checkChangeLog(list, changes);
    this.figures.ackedWritesChecked += this.#uncheckedAcks;
    this.#uncheckedAcks = 0;
  }

  /** Creates whose outcome is still unknown (an idempotent claim left in flight by a crash). */
  get unresolved(): number {
    return this.#tracked.filter((t) => t.pending !== undefined).length;
  }

  /** The operations still pending, for assertion messages. */
  describeUnresolved(): string {
    return this.#tracked
      .filter((t) => t.pending !== undefined)
      .map((t) => `${t.pending!.op} ${t.key ?? t.current?.id ?? t.body.content}`)
      .join('; ');
  }

  #check(
    t: Tracked,
    byId: ReadonlyMap<string, Message>,
    byContent: ReadonlyMap<string, Message[]>,
    known: Set<string>,
  ): void {
    const id = t.current?.id ?? t.firstAnswer?.id;
    const actual = id === undefined ? undefined : byId.get(id);
    if (actual !== undefined) known.add(actual.id);
    const pending = t.pending;
    if (pending === undefined) {
      if (t.current === undefined && !t.gone) return; // a refused create, checked by content
      if (t.gone) {
        if (actual !== undefined) {
          this.figures.lost += 1;
          this.#anomaly(`acknowledged delete lost: ${JSON.stringify(actual)}`);
        }
      } else if (!isDeepStrictEqual(actual, t.current)) {
        this.figures.lost += 1;
        this.#anomaly(
          `state differs from what clients were told: expected ${JSON.stringify(t.current)}, stored ${JSON.stringify(actual)}`,
        );
      }
      return;
    }
    if (pending.op === 'create') {
      const found = byContent.get(t.body.content) ?? [];
      const stored = found[0];
      if (stored === undefined) {
        // Not stored. Without a key, the client gives up: it must never appear later.
        if (t.key === undefined) {
          t.pending = undefined;
          this.#neverStored.add(t.body.content);
        }
        return;
      }
      known.add(stored.id);
      const expected: Message = {
        id: stored.id,
        room: t.body.room ?? 'general',
        author: t.body.author,
        content: t.body.content,
        createdAt: stored.createdAt,
        updatedAt: stored.createdAt,
        version: 1,
        replyTo: null,
      };
      if (!isDeepStrictEqual(stored, expected)) {
        this.figures.halfDone += 1;
        this.#anomaly(`an unanswered create is stored wrong: ${JSON.stringify(stored)}`);
      }
      if (t.key !== undefined) {
        // The retry above got 409 (in flight) although the create committed with its outcome.
        this.#anomaly(`create ${t.key} is stored but its key is still in flight`);
        return;
      }
      t.pending = undefined;
      t.current = stored;
      return;
    }
    const before = t.current!;
    const happened: Message | undefined =
      pending.op === 'delete'
        ? undefined
        : actual === undefined
          ? undefined
          : {
              ...before,
              content: pending.content,
              version: before.version + 1,
              updatedAt: actual.updatedAt,
            };
    if (isDeepStrictEqual(actual, before)) {
      t.pending = undefined;
    } else if (
      (pending.op === 'delete' && actual === undefined) ||
      (pending.op === 'edit' && actual !== undefined && isDeepStrictEqual(actual, happened))
    ) {
      t.pending = undefined;
      t.current = actual;
      t.gone = actual === undefined;
    } else {
      this.figures.halfDone += 1;
      this.#anomaly(
        `unanswered ${pending.op} neither happened nor not: before ${JSON.stringify(before)}, stored ${JSON.stringify(actual)}`,
      );
    }
  }

  #checkChangeLog(list: readonly Message[], changes: readonly Change[]): void {
    const last = new Map<string, Change>();
    let previous = 0;
    for (const change of changes) {
      if (change.seq <= previous) this.#anomaly(`change ${change.seq} follows ${previous}`);
      previous = change.seq;
      last.set(change.message.id, change);
    }
    const listed = new Set(list.map((m) => m.id));
    for (const m of list) {
      const change = last.get(m.id);
      if (change === undefined || change.kind === 'message.deleted') {
        this.#anomaly(`listed message ${m.id} has latest change ${change?.kind ?? 'none'}`);
      } else if (!isDeepStrictEqual(change.message, m)) {
        this.#anomaly(
          `change log disagrees with the list: ${JSON.stringify(change.message)} vs ${JSON.stringify(m)}`,
        );
      }
    }
    for (const [id, change] of last) {
      if (change.kind !== 'message.deleted' && !listed.has(id)) {
        this.#anomaly(`message ${id} is not listed but its latest change is ${change.kind}`);
      }
    }
  }

  #newMessage(author: string, keyed: boolean, random: () => number, padding = ''): Tracked {
    const n = ++this.#counter;
    const roomIndex = Math.floor(random() * (ROOMS.length + 1));
    const body: CreateBody = {
      author,
      content: `${this.#runId}/${n} héllo ✓ 🙂\nline two${padding}`,
      ...(roomIndex < ROOMS.length ? { room: ROOMS[roomIndex] } : {}),
    };
    const tracked: Tracked = {
      body,
      key: keyed ? `${this.#runId}-key-${n}` : undefined,
      firstAnswer: undefined,
      current: undefined,
      gone: false,
      pending: undefined,
      edits: 0,
    };
    this.#tracked.push(tracked);
    return tracked;
  }

  #post(base: string, body: unknown, key?: string): Promise<CallResult> {
    return call(base, 'POST', '/api/messages', {
      body,
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });
  }

  async #create(base: string, t: Tracked): Promise<CallResult> {
    const result = await this.#post(base, t.body, t.key);
    if (this.#unanswered(result, t, { op: 'create' })) return result;
    const answer = result as Answer;
    if (answer.status !== 201) {
      this.#anomaly(`create: ${describeResult(answer)}`);
      t.pending = { op: 'create' };
      return result;
    }
    const message = json<Message>(answer);
    const expectedLocation = `/api/messages/${message.id}`;
    if (
      !UUID.test(message.id) ||
      message.content !== t.body.content ||
      message.author !== t.body.author ||
      message.room !== (t.body.room ?? 'general') ||
      message.version !== 1 ||
      message.createdAt !== message.updatedAt ||
      answer.headers.get('location') !== expectedLocation ||
      answer.headers.get('etag') !== '"1"'
    ) {
      this.#anomaly(`create answered wrong: ${answer.text}`);
    }
    t.firstAnswer = message;
    t.current = message;
    this.#ack();
    return result;
  }

  async #edit(base: string, t: Tracked, ifMatch: boolean): Promise<CallResult> {
    const before = t.current!;
    const content = `${t.body.content} edit ${++t.edits}`;
    const result = await call(base, 'PUT', `/api/messages/${before.id}`, {
      body: { ...before, content },
      ...(ifMatch ? { headers: { 'if-match': `"${before.version}"` } } : {}),
    });
    if (this.#unanswered(result, t, { op: 'edit', content })) return result;
    const answer = result as Answer;
    if (answer.status !== 200) {
      this.#anomaly(`edit of ${before.id} v${before.version}: ${describeResult(answer)}`);
      return result;
    }
    const message = json<Message>(answer);
    const expected = {
      ...before,
      content,
      version: before.version + 1,
      updatedAt: message.updatedAt,
    };
    if (!isDeepStrictEqual(message, expected) || message.updatedAt < before.updatedAt) {
      this.#anomaly(`edit answered wrong: ${answer.text} after ${JSON.stringify(before)}`);
    }
    t.current = message;
    this.#ack();
    return result;
  }

  /** A PUT that must be refused (409 stale version/updatedAt, or 412 stale If-Match) and change nothing. */
  async #staleEdit(base: string, t: Tracked, byIfMatch: boolean): Promise<CallResult> {
    const before = t.current!;
    const content = `${t.body.content} stale ${++t.edits}`;
    const body = byIfMatch
      ? { content }
      : before.version > 1
        ? { ...before, content, version: before.version - 1 }
        : { ...before, content, updatedAt: '2000-01-01T00:00:00.000Z' };
    const result = await call(base, 'PUT', `/api/messages/${before.id}`, {
      body,
      ...(byIfMatch ? { headers: { 'if-match': `"${before.version + 7}"` } } : {}),
    });
    return this.#expectRefusal(result, byIfMatch ? 412 : 409, 'stale edit', t);
  }

  async #delete(base: string, t: Tracked, ifMatch: boolean): Promise<CallResult> {
    const before = t.current!;
    const result = await call(base, 'DELETE', `/api/messages/${before.id}`, {
      ...(ifMatch ? { headers: { 'if-match': `"${before.version}"` } } : {}),
    });
    if (this.#unanswered(result, t, { op: 'delete' })) return result;
    const answer = result as Answer;
    if (answer.status !== 200 || !isDeepStrictEqual(json(answer), before)) {
      this.#anomaly(`delete of ${JSON.stringify(before)}: ${describeResult(answer)}`);
      if (answer.status !== 200) return result;
    }
    t.current = undefined;
    t.gone = true;
    this.#ack();
    return result;
  }

  async #staleDelete(base: string, t: Tracked): Promise<CallResult> {
    const before = t.current!;
    const result = await call(base, 'DELETE', `/api/messages/${before.id}`, {
      headers: { 'if-match': `"${before.version + 3}"` },
    });
    return this.#expectRefusal(result, 412, 'stale delete', t);
  }

  /** The same key and body replays the first answer; the same key with another body is a 422. */
  async #replayOrReuse(base: string, t: Tracked, replay: boolean): Promise<CallResult> {
    const body = replay ? t.body : { ...t.body, content: `${t.body.content} other body` };
    const result = await this.#post(base, body, t.key);
    if (!replay) return this.#expectRefusal(result, 422, 'key reuse', t);
    if (this.#unanswered(result)) return result;
    const answer = result as Answer;
    if (
      answer.status !== 201 ||
      answer.headers.get('idempotent-replayed') !== 'true' ||
      !isDeepStrictEqual(json(answer), t.firstAnswer)
    ) {
      this.#anomaly(`replay of ${t.key}: ${describeResult(answer)}`);
    } else {
      this.figures.replaysChecked += 1;
    }
    return result;
  }

  /** A create with an unknown field: a 400, and the message must never be stored. */
  async #refusedCreate(base: string, author: string): Promise<CallResult> {
    const content = `${this.#runId}/${++this.#counter} refused`;
    this.#neverStored.add(content);
    const result = await this.#post(base, { author, content, colour: 'red' });
    return this.#expectRefusal(result, 400, 'create with an unknown field', undefined);
  }

  async #read(base: string, t: Tracked): Promise<CallResult> {
    const result = await call(base, 'GET', `/api/messages/${t.current!.id}`);
    if (this.#unanswered(result)) return result;
    const answer = result as Answer;
    this.figures.reads += 1;
    if (answer.status !== 200 || !isDeepStrictEqual(json(answer), t.current)) {
      this.figures.lost += 1;
      this.#anomaly(`read of ${JSON.stringify(t.current)}: ${describeResult(answer)}`);
    }
    return result;
  }

  #expectRefusal(result: CallResult, status: number, what: string, t?: Tracked): CallResult {
    // A refused request changes nothing whatever the answer, so the state stays as it was.
    if (this.#unanswered(result)) return result;
    const answer = result as Answer;
    if (answer.status === status) {
      this.figures.refused4xx += 1;
      if (!answer.headers.get('content-type')?.startsWith('application/problem+json')) {
        this.#anomaly(`${what}: ${status} is not a problem document`);
      }
    } else {
      this.#anomaly(
        `${what} on ${JSON.stringify(t?.current)}: expected ${status}, got ${describeResult(answer)}`,
      );
    }
    return result;
  }

  /**
   * True when the request got no usable answer. A write without one is pending
   * (it may have happened) or refused (it must not have), as the mode says.
   */
  #unanswered(result: CallResult, t?: Tracked, write?: Pending): boolean {
    let how: 'unknown' | 'refused';
    if (!result.answered) {
      this.figures.noAnswer += 1;
      how = this.#mode.noAnswer;
    } else if (result.status === 503 || result.status === 507) {
      if (result.status === 503) {
        this.figures.answered503 += 1;
        this.figures.slowest503Ms = Math.max(this.figures.slowest503Ms, Math.round(result.ms));
        if (!result.headers.get('retry-after')) this.#anomaly('503 without Retry-After');
      } else {
        this.figures.answered507 += 1;
      }
      if (!result.headers.get('content-type')?.startsWith('application/problem+json')) {
        this.#anomaly(`${result.status} is not a problem document: ${result.text}`);
      }
      if (this.#mode.storeErrors === 'anomaly') this.#anomaly(`${result.status}: ${result.text}`);
      how = this.#mode.storeErrors === 'refused' ? 'refused' : 'unknown';
    } else if (result.status >= 500) {
      this.#anomaly(`server error: ${describeResult(result)}`);
      how = 'unknown';
    } else {
      return false;
    }
    if (t !== undefined && write !== undefined) {
      if (how === 'unknown') t.pending = write;
      else if (write.op === 'create') this.#neverStored.add(t.body.content);
    }
    return true;
  }

  #ack(): void {
    this.figures.ackedWrites += 1;
    this.#uncheckedAcks += 1;
  }

  #anomaly(text: string): void {
    if (this.anomalies.length < 50) this.anomalies.push(text.slice(0, 600));
  }
}
