/**
 * Search on PostgreSQL: the `search` condition renders as one LIKE per term
 * over messages.search_text (list-sql.ts), served by its pg_trgm GIN index.
 * Here: giving rows stored before migration 6 their normalized text.
 */
import type pg from 'pg';
import { searchText } from '../../domain/search-text.ts';

/** Rows per statement: a short transaction each, so an upgrade of a big table blocks no one for long. */
const FILL_BATCH = 2000;

/**
 * Normalizes, in batches, every message that has no search_text yet (only
 * rows from before migration 6: every write stores it). Idempotent, and
 * cheap when there is nothing to do: the rows are found by a partial index
 * that is empty then. Instances that start together may both fill: each
 * row gets the same text either way, and an edit meanwhile (which stores its
 * own) is not overwritten.
 */
export async function fillSearchText(client: pg.ClientBase): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ id: string; content: string }>(
      'SELECT id::text AS id, content FROM messages WHERE search_text IS NULL ORDER BY id LIMIT $1',
      [FILL_BATCH],
    );
    if (rows.length === 0) return;
    await client.query(
      `UPDATE messages SET search_text = f.search_text
        FROM unnest($1::uuid[], $2::text[]) AS f(id, search_text)
        WHERE messages.id = f.id AND messages.search_text IS NULL`,
      [rows.map((r) => r.id), rows.map((r) => searchText(r.content))],
    );
  }
}
