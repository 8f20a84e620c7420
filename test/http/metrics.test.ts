/** /metrics: open event streams and store-operation latency, scraped as Prometheus sees them. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { eventually } from '../events/event-helpers.ts';
import { connectSse } from '../events/sse-client.ts';
import { eachEngine, withApp, type ContractApp } from './http-contract.ts';

/** The value of one sample of the scrape (a metric name and its labels), or undefined. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const given = new Map(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => given.get(key) === value)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

async function scrape(app: ContractApp): Promise<string> {
  const response = await app.t.app.http.inject({ url: '/metrics' });
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return response.body;
}

eachEngine('metrics', (engine) => {
  it('event_streams_open counts the streams open now', async () => {
    await withApp(engine, async (app) => {
      assert.match(await scrape(app), /# TYPE event_streams_open gauge/);
      assert.equal(sample(await scrape(app), 'event_streams_open'), 0);
      await app.t.listen();
      const first = await connectSse(`${app.t.url}/api/events`);
      const second = await connectSse(`${app.t.url}/api/events?since=0`);
      assert.equal(sample(await scrape(app), 'event_streams_open'), 2);
      assert.equal(sample(await scrape(app), 'event_streams_stalled'), 0);
      first.close();
      await eventually(() => app.t.app.http.eventStreams().open === 1, 'the server saw one go');
      assert.equal(sample(await scrape(app), 'event_streams_open'), 1);
      second.close();
      await eventually(() => app.t.app.http.eventStreams().open === 0, 'the server saw both go');
      assert.equal(sample(await scrape(app), 'event_streams_open'), 0);
    });
  });

  it('store_operation_duration_seconds times each operation, labelled by operation and engine', async () => {
    await withApp(engine, async (app) => {
      const labels = (operation: string) => ({ operation, engine: engine.name });
      const count = (text: string, operation: string) =>
        sample(text, 'store_operation_duration_seconds_count', labels(operation)) ?? 0;
      const before = await scrape(app);
      assert.match(before, /# TYPE store_operation_duration_seconds histogram/);

      const created = [await app.create(), await app.create(), await app.create()];
      const edited = await app.inject({
        method: 'PUT',
        url: `/api/messages/${created[0]!.id}`,
        payload: { content: 'edited' },
      });
      assert.equal(edited.statusCode, 200);
      const removed = await app.inject({
        method: 'DELETE',
        url: `/api/messages/${created[1]!.id}`,
      });
      assert.equal(removed.statusCode, 200);
      assert.equal((await app.inject({ url: '/api/messages?limit=10' })).statusCode, 200);

      const after = await scrape(app);
      assert.equal(count(after, 'messages.create') - count(before, 'messages.create'), 3);
      assert.equal(count(after, 'messages.update') - count(before, 'messages.update'), 1);
      assert.equal(count(after, 'messages.delete') - count(before, 'messages.delete'), 1);
      assert.ok(
        count(after, 'messages.list') > count(before, 'messages.list'),
        'the list is timed',
      );

      // A histogram: cumulative buckets up to +Inf (= the count), and a sum of the times.
      const creates = count(after, 'messages.create');
      const inf = sample(after, 'store_operation_duration_seconds_bucket', {
        ...labels('messages.create'),
        le: '+Inf',
      });
      assert.equal(inf, creates);
      const sum = sample(after, 'store_operation_duration_seconds_sum', labels('messages.create'));
      assert.ok(sum !== undefined && sum > 0, `a positive sum of seconds (${sum})`);
      // Nothing is labelled with another engine.
      const engines = new Set(
        [...after.matchAll(/^store_operation_duration_seconds_count\{[^}]*engine="([^"]+)"/gm)].map(
          (m) => m[1],
        ),
      );
      assert.deepEqual([...engines], [engine.name]);
    });
  });
});
