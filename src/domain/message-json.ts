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
  return at < 0 ? undefined : json.slice(at + ID_PREFIX.length, at + ID_PREFIX.length + 36);
}

/** The id of the first message in joined texts (see lastIdOfMessagesJson). */
export function firstIdOfMessagesJson(json: string): string | undefined {
  return json.startsWith(ID_PREFIX)
    ? json.slice(ID_PREFIX.length, ID_PREFIX.length + 36)
    : undefined;
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
