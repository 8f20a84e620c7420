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
  });
}

const ID_PREFIX = '{"id":"';

/** The id of a message's JSON text as messageJson wrote it (its first field), without parsing it. */
export function idOfMessageJson(json: string): string {
  return json.startsWith(ID_PREFIX)
    ? json.slice(ID_PREFIX.length, ID_PREFIX.length + 36)
    : (JSON.parse(json) as Message).id;
}
