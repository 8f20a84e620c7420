/**
 * The hot paths' histogram writes exactly what prom-client's own Histogram
 * writes for the same observations, so scrapers and dashboards see no change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { SeriesHistogram } from '../../src/http/series-histogram.ts';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.25, 1];
const NAME = 'request_seconds';
const HELP = 'Request latency, by method and route';

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const series = new SeriesHistogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route'] as const,
    buckets: BUCKETS,
    registry: ours,
  });
  const reference = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route'] as const,
    buckets: BUCKETS,
    registers: [theirs],
  });
  return { ours, theirs, series, reference };
}

// On a bound, below the first, above the last, between, and a route with a quote and a newline.
const OBSERVATIONS = [
  [{ method: 'GET', route: '/api/messages/:id' }, 0.0005],
  [{ method: 'GET', route: '/api/messages/:id' }, 0.0004],
  [{ method: 'GET', route: '/api/messages/:id' }, 0.003],
  [{ method: 'GET', route: '/api/messages/:id' }, 7],
  [{ method: 'POST', route: '/api/messages' }, 1],
  [{ method: 'POST', route: '/api/messages' }, 0],
  [{ method: 'GET', route: 'odd "route"\nname\\' }, 0.02],
] as const;

test('the text matches prom-client Histogram for the same observations, byte for byte', async () => {
  const { ours, theirs, series, reference } = both();
  for (const [labels, seconds] of OBSERVATIONS) {
    series.series(labels).observe(seconds);
    reference.observe(labels, seconds);
  }
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics());
  assert.match(
    text,
    /request_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/messages\/:id"\} 4/,
  );
  assert.match(text, /request_seconds_count\{method="POST",route="\/api\/messages"\} 2/);
});

test('a series kept by its caller is the one reported, and reset zeroes it in place', async () => {
  const { ours, series } = both();
  const kept = series.series({ method: 'GET', route: '/' });
  kept.observe(0.002);
  assert.equal(series.series({ method: 'GET', route: '/' }), kept);
  assert.equal(kept.count, 1);
  series.reset();
  assert.equal(kept.count, 0);
  kept.observe(2);
  const text = await ours.metrics();
  assert.match(text, /request_seconds_bucket\{le="1",method="GET",route="\/"\} 0/);
  assert.match(text, /request_seconds_bucket\{le="\+Inf",method="GET",route="\/"\} 1/);
  assert.match(text, /request_seconds_sum\{method="GET",route="\/"\} 2/);
  assert.deepEqual(
    [...series.all()].map((one) => [one.labels, one.count]),
    [[{ method: 'GET', route: '/' }, 1]],
  );
});

test('a value that is not a finite number is not counted', async () => {
  const { ours, series } = both();
  const one = series.series({ method: 'GET', route: '/' });
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    one.observe(bad);
  }
  one.observe(0.5);
  assert.equal(one.count, 1);
  assert.match(await ours.metrics(), /request_seconds_sum\{method="GET",route="\/"\} 0\.5\n/);
});
