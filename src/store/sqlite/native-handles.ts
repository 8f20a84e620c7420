/**
 * Opens SQLite connections whose driver objects are never garbage-collected.
 *
 * better-sqlite3 12 wraps its Database and Statement in node::ObjectWrap.
 * From Node 24.19 that class's destructor removes an environment cleanup hook,
 * which asserts that a V8 context is entered; a GC run from a platform task
 * has none, so collecting a single statement aborts the whole process
 * (`Assertion failed: (env) != nullptr`, seen in the test suite on Node
 * 24.21). better-sqlite3 13 (Node-API) does not have the problem but needs
 * Node 22 and crashes on Node 20, which this service still supports.
 *
 * So every driver object the store makes is kept until the process ends,
 * when Node frees them through its own cleanup hooks, with the environment
 * still there. It costs little: a store prepares a fixed set of statements at
 * open (plus one per list shape, cached), and `close()` still finalizes them
 * and closes the file; only their small JavaScript shells stay.
 *
 * Only `prepare` is kept: `db.pragma()` and `db.iterate()` make objects of
 * their own that nothing keeps, so the engine does not call them (use
 * `pragma()` below). `db.transaction()` is safe: the driver caches its
 * statements for as long as the connection object lives, that is forever.
 */
import Database from 'better-sqlite3';

const kept = new Set<object>();

export function openDatabase(filename: string, options?: Database.Options): Database.Database {
  const db = new Database(filename, options);
  kept.add(db);
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    kept.add(statement);
    return statement;
  }) as Database.Database['prepare'];
  return db;
}

/** `db.pragma(source)` through a kept statement: the rows it answers (none for most settings). */
export function pragma(db: Database.Database, source: string): unknown[] {
  const statement = db.prepare(`PRAGMA ${source}`);
  if (statement.reader) return statement.all();
  statement.run();
  return [];
}
