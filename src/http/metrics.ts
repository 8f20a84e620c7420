/**
 * Prometheus metrics (prom-client): request counts and latency by route and
 * status, open event streams, change-feed followers not loaded,
 * store-operation latency, process metrics.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { SeriesHistogram, type HistogramSeries } from './series-histogram.ts';
import { PROBLEM_CONTENT_TYPE, ProblemSchema } from './problem.ts';
import { problemResponses } from './responses.ts';

export interface MetricsOptions {
  /**
   * When set, GET /metrics needs `Authorization: Bearer <token>`. When unset
   * with authentication on, it needs a valid bearer JWT instead (auth.ts).
   */
  readonly token: string | null;
  /** Change-feed followers (the streams' access view, the rooms' recent messages) that are not loaded. */
  readonly unloadedFollowers: () => number;
}

/** The instance's registry, made before the store so that store operations can be timed from the start. */
export interface Metrics {
  readonly registry: Registry;
  /** Records one store operation (e.g. 'messages.create') of the engine the metrics were made for. */
  observeStoreOperation(operation: string, seconds: number): void;
}

export function createMetrics(engine: string): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const storeOperations = new SeriesHistogram({
    name: 'store_operation_duration_seconds',
    help: 'Store operation latency (one operation of one concern, e.g. messages.create), by operation and engine',
    labelNames: ['operation', 'engine'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registry,
  });
  const series = new Map<string, HistogramSeries>();
  return {
    registry,
    observeStoreOperation: (operation, seconds) => {
      let one = series.get(operation);
      if (one === undefined) {
        one = storeOperations.series({ operation, engine });
        series.set(operation, one);
      }
      one.observe(seconds);
    },
  };
}

export function registerMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  options: MetricsOptions,
): void {
  const { registry } = metrics;
  // Read at scrape time from the event-stream plugin's own count, so the gauge cannot drift.
  const streams = () => (app.hasDecorator('eventStreams') ? app.eventStreams() : undefined);
  new Gauge({
    name: 'event_streams_open',
    help: 'Event streams (GET /api/events) open on this instance',
    registers: [registry],
    collect() {
      this.set(streams()?.open ?? 0);
    },
  });
  new Gauge({
    name: 'event_streams_stalled',
    help: 'Open event streams waiting for their client to read',
    registers: [registry],
    collect() {
      this.set(streams()?.stalled ?? 0);
    },
  });
  new Gauge({
    name: 'change_feed_followers_unloaded',
    help: "Change-feed followers (the access view, the rooms' recent messages) not loaded again after a failure; while above 0, event streams of signed-in non-admins wait",
    registers: [registry],
    collect() {
      this.set(options.unloadedFollowers());
    },
  });
  // Counted by the histogram below (each series' count); set from it at scrape time, so a
  // request pays for one observation, not two.
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const one of duration.all()) this.inc(one.labels, one.count);
    },
  });
  // Registered after the counter: the registry writes metrics in that order, as before.
  const duration = new SeriesHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registry,
  });
  // The route is the pattern, never the raw URL, so the series stay as few as the routes.
  const series = new Map<string, HistogramSeries>();
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  app.addHook('onResponse', (request, reply, done) => {
    const method = request.method;
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const key = `${method} ${status} ${route}`;
    let one = series.get(key);
    if (one === undefined) {
      one = duration.series({ method, route, status: String(status) });
      series.set(key, one);
    }
    one.observe(reply.elapsedTime / 1000);
    done();
  });

  const text = (description: string) => ({
    description,
    content: { 'text/plain': { schema: { type: 'string' } } },
  });
  const schema = {
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'Request counts and latency histograms by method, route and status, open event streams, change-feed followers not loaded after a failure, store-operation latency by operation and engine, plus process metrics, in the Prometheus text format. With METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>`; otherwise, when authentication is on, a valid bearer JWT (any subject; not from the URL); with neither, it is open.',
    tags: ['operations'],
    response: {
      200: text('The metrics'),
      401: {
        description:
          'METRICS_TOKEN is set and the request did not carry it (text), or authentication is on, METRICS_TOKEN is unset and the request carried no valid bearer JWT (a problem)',
        content: {
          'text/plain': { schema: { type: 'string' } },
          [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema },
        },
      },
      ...problemResponses(429),
    },
  };
  // Both answers are sent as text, which the response serializer leaves alone.
  app.get('/metrics', { schema }, async (request, reply) => {
    if (
      options.token !== null &&
      !sameSecret(request.headers.authorization, `Bearer ${options.token}`)
    ) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .type('text/plain')
        .send('unauthorized\n');
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** Constant-time comparison, so response timing does not reveal how much of the token matched. */
function sameSecret(given: string | undefined, expected: string): boolean {
  const a = createHash('sha256')
    .update(given ?? '')
    .digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
