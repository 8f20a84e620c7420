import type { Message } from './message.ts';

/**
 * The message as JSON text, fields in their documented order: the change log,
 * stored responses, and the copy each store keeps with the row, which lists
 * send as it is (byte for byte what this function wrote).
 */
export function messageJson(m: Message): string {
  return JSON.stringify({
    id: m.id,
    room: m.room,
    author: m.author,
    content: m.content,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
    version: m.version,
    replyTo: m.replyTo,
  });
}

const ID_PREFIX = '{"id":"';

/**
 * The id of the last message in JSON texts that messageJson wrote, joined by
 * commas. Each starts with `{"id":"` and those bytes occur nowhere else: a
 * quote inside a string value is always escaped.
 */
export function lastIdOfMessagesJson(json: string): string | undefined {
  const at = json.lastIndexOf(ID_PREFIX);
  return at < 0 ? undefined : idAt(json, at + ID_PREFIX.length);
}

/**
 * The 36 characters of an id at `start`, copied. V8 answers a slice of 13
 * characters or more as a view that keeps the whole string alive: the last id
 * of a streamed list's batch, carried into the next batch's query, kept the
 * batch's JSON (about 155 KB) alive as long as that query was (on PostgreSQL,
 * past its end: see PostgresStore's #query), so it reached the old
 * generation (the list figures in docs/performance.md). Slicing a string built around the
 * slice makes V8 copy those characters first.
 */
function idAt(json: string, start: number): string {
  return ` ${json.slice(start, start + 36)}`.slice(1);
}

/** The id of the first message in joined texts (see lastIdOfMessagesJson). */
export function firstIdOfMessagesJson(json: string): string | undefined {
  return json.startsWith(ID_PREFIX) ? idAt(json, ID_PREFIX.length) : undefined;
}

/** The same joined texts without the last message (see lastIdOfMessagesJson for why this is exact). */
export function withoutLastMessage(json: string): string {
  const at = json.lastIndexOf(ID_PREFIX);
  return at <= 0 ? '' : json.slice(0, at - 1);
}

/** The same joined texts without the first message (see lastIdOfMessagesJson for why this is exact). */
export function withoutFirstMessage(json: string): string {
  const at = json.indexOf(ID_PREFIX, 1);
  return at < 0 ? '' : json.slice(at);
}
