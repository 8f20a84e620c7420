/**
 * Search on PostgreSQL: the `search` condition renders as one LIKE per term
 * over messages.search_text (list-sql.ts), served by its pg_trgm GIN index.
 * Here: giving rows stored before migration 6 their normalized text, as a
 * step of migration 7 (in its transaction).
 */
import type pg from 'pg';
import { searchText } from '../../domain/search-text.ts';

/** Rows per statement: the table is walked by its key, a batch at a time. */
const FILL_BATCH = 5000;

const GIN_INDEX =
  'CREATE INDEX messages_search_text ON messages USING gin (search_text public.gin_trgm_ops)';

/**
 * Normalizes every message that has no search_text yet (only rows from
 * before migration 6: every write stores it). Nothing to do is found by the
 * partial index of those rows, which is empty then. When there is work, the
 * trigram index is dropped and built again after the fill: one build costs a
 * fraction of a GIN insert per row.
 */
export async function fillSearchText(client: pg.ClientBase): Promise<void> {
  const { rows: missing } = await client.query(
    'SELECT 1 FROM messages WHERE search_text IS NULL LIMIT 1',
  );
  if (missing.length === 0) return;
  await client.query('DROP INDEX messages_search_text');
  let after: string | undefined;
  for (;;) {
    const { rows } = await client.query<{ id: string; content: string }>(
      after === undefined
        ? 'SELECT id::text AS id, content FROM messages WHERE search_text IS NULL ORDER BY id LIMIT $1'
        : `SELECT id::text AS id, content FROM messages WHERE search_text IS NULL AND id > $2::uuid
           ORDER BY id LIMIT $1`,
      after === undefined ? [FILL_BATCH] : [FILL_BATCH, after],
    );
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    await client.query(
      `UPDATE messages SET search_text = f.search_text
        FROM unnest($1::uuid[], $2::text[]) AS f(id, search_text)
        WHERE messages.id = f.id AND messages.search_text IS NULL`,
      [rows.map((r) => r.id), rows.map((r) => searchText(r.content))],
    );
  }
  await client.query(GIN_INDEX);
}
