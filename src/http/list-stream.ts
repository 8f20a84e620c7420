/**
 * The body of a list without `limit`: `[`, the batches comma-separated, `]`,
 * each batch a chunk of its own. It is pulled, not pushed: the next batch is read from
 * the store only once the client has taken the previous one (Fastify pipes the
 * body, so the response's backpressure reaches the batches), so a slow reader
 * holds about one batch. A reader that takes nothing for `stallTimeoutMs` is
 * cut: its connection is destroyed, so it sees a list without the closing
 * bracket, like any failure after the first byte, and frees what it held.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { MessagePage } from '../domain/message-store.ts';

/** What a batch brings to the body: its items' JSON, joined by commas (messages, rooms, memberships). */
export type JsonBatch = Pick<MessagePage, 'json' | 'count'>;

export interface ListStreamOptions {
  readonly res: ServerResponse;
  readonly stallTimeoutMs: number;
  /** Called when the reader is cut for not reading. */
  readonly onCut: () => void;
}

export function listStream(
  first: JsonBatch | undefined,
  rest: AsyncGenerator<JsonBatch>,
  options: ListStreamOptions,
): Readable {
  const { res } = options;
  let stall: NodeJS.Timeout | undefined;
  const reader: Reader = {
    waiting: () => {
      clearTimeout(stall);
      if (res.destroyed || res.writableFinished) return;
      stall = setTimeout(() => {
        options.onCut();
        res.destroy();
      }, options.stallTimeoutMs);
    },
    took: () => clearTimeout(stall),
  };
  res.once('finish', reader.took).once('close', reader.took);
  return Readable.from(watched(chunks(first, rest), reader), { objectMode: false });
}

interface Reader {
  /** A chunk waits for the reader: the stall timer runs. */
  waiting(): void;
  /** The reader took it (or the response is over). */
  took(): void;
}

/**
 * Readable.from resumes this generator after a `yield` only when the reader
 * wants more, so the time spent at a `yield` is the time the reader leaves its
 * data untaken; reading the next batch from the store does not count.
 */
async function* watched(source: AsyncGenerator<string>, reader: Reader): AsyncGenerator<string> {
  try {
    for await (const chunk of source) {
      reader.waiting();
      yield chunk;
      reader.took();
    }
    // The last chunks may still wait in the response's buffer, until 'finish'.
    reader.waiting();
  } finally {
    // A cut response stops the reads, wherever it was.
    await source.return(undefined);
  }
}

/**
 * `[`, the batches comma-separated, `]`. The comma goes out as a chunk of its
 * own: `',' + batch` would be copied into a new string of the batch's size
 * when written, which doubled the garbage of a long list and the full
 * collections it costs.
 */
async function* chunks(
  first: JsonBatch | undefined,
  rest: AsyncGenerator<JsonBatch>,
): AsyncGenerator<string> {
  try {
    yield '[';
    let separator = '';
    for (let page = first; page !== undefined;) {
      // Each batch is its items' JSON, joined (for messages: as stored): sent as it is.
      if (page.count > 0) {
        if (separator !== '') yield separator;
        yield page.json;
        separator = ',';
      }
      const next = await rest.next();
      page = next.done === true ? undefined : next.value;
    }
    yield ']';
  } finally {
    await rest.return(undefined);
  }
}
