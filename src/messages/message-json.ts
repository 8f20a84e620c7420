import type { Message } from './message.ts';

/** The message as JSON text, fields in their documented order (change log and stored responses). */
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
