/** The SQL of a message list on SQLite: one prepared statement per query shape. */
import type { ListQuery } from '../../messages/message.ts';

export const MESSAGE_COLUMNS = 'id, room, author, content, created_at, updated_at, version';

/** A list reads each message's stored JSON text (`body`) only. */
export interface ListStatement {
  readonly text: string;
  readonly values: unknown[];
}

export function listStatement(query: ListQuery & { readonly limit: number }): ListStatement {
  const values: unknown[] = [];
  const where: string[] = [];
  if (query.room !== undefined) {
    where.push('room = ?');
    values.push(query.room);
  }
  if (query.after !== undefined) {
    where.push('id > ?');
    values.push(query.after);
  }
  if (query.before !== undefined) {
    where.push('id < ?');
    values.push(query.before);
  }
  if (query.ids !== undefined) {
    where.push('id IN (SELECT value FROM json_each(?))');
    values.push(JSON.stringify(query.ids));
  }
  values.push(query.limit);
  const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  const direction = query.order === 'desc' ? 'DESC' : 'ASC';
  return {
    text: `SELECT body FROM messages${filter} ORDER BY id ${direction} LIMIT ?`,
    values,
  };
}
