/**
 * A request's logger is made on its first written line: lines below the level
 * make nothing, and every written line carries the request's bindings.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino, { type Logger } from 'pino';
import { requestLoggerFactory } from '../../src/http/request-logger.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const server = pino({ level }, stream);
  // Counts the children made through it; pino makes each child from the logger it is called
  // on, so the children themselves are made from `server` and carry nothing of this.
  let children = 0;
  const parent = Object.create(server) as Logger;
  parent.child = ((...args: Parameters<Logger['child']>) => {
    children += 1;
    return server.child(...args);
  }) as Logger['child'];
  return { parent, lines, children: () => children };
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

test('lines below the level make no child and write nothing', async () => {
  const { parent, lines, children } = capture('warn');
  const log = requestLoggerFactory(parent, { reqId: 'r-1' }, {});
  log.info('not written');
  log.debug({ detail: 1 }, 'not written either');
  log.trace('nor this');
  await flushed();
  assert.equal(children(), 0);
  assert.deepEqual(lines, []);
  assert.equal(log.level, 'warn');
});

test('the first written line makes the child once, and every line carries the bindings', async () => {
  const { parent, lines, children } = capture('info');
  const log = requestLoggerFactory(parent, { reqId: 'r-2' }, {});
  log.info({ field: 1 }, 'first');
  log.error(new Error('boom'), 'second');
  log.debug('below the level');
  await flushed();
  assert.equal(children(), 1);
  assert.deepEqual(
    lines.map((l) => [l.level, l.reqId, l.msg]),
    [
      [30, 'r-2', 'first'],
      [50, 'r-2', 'second'],
    ],
  );
  assert.equal(lines[0]!.field, 1);
  assert.equal((lines[1]!.err as { message: string }).message, 'boom');
});

test("a child of the request's logger keeps the request's bindings", async () => {
  const { parent, lines } = capture('info');
  const log = requestLoggerFactory(parent, { reqId: 'r-3' }, {});
  log.child({ part: 'list' }).warn('cut');
  await flushed();
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.part, l.msg]),
    [['r-3', 'list', 'cut']],
  );
});

test("setting the level sets the request's own, not the server's", async () => {
  const { parent, lines } = capture('warn');
  const log = requestLoggerFactory(parent, { reqId: 'r-4' }, {});
  log.level = 'debug';
  log.debug('now written');
  parent.debug('still not the server');
  await flushed();
  assert.equal(parent.level, 'warn');
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.msg]),
    [['r-4', 'now written']],
  );
});

test('a route with a level of its own gets pino’s child at once', async () => {
  const { parent, lines, children } = capture('warn');
  const log = requestLoggerFactory(parent, { reqId: 'r-5' }, { level: 'info' });
  assert.equal(children(), 1);
  log.info('written at the route’s level');
  await flushed();
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.msg]),
    [['r-5', 'written at the route’s level']],
  );
});
