/** Liveness and readiness. Readiness: the store answers, its migrations are applied, and we are not stopping. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, ErrorKinds, isAppError } from '../errors.ts';
import { problemResponses } from './responses.ts';

export interface HealthOptions {
  readonly ping: () => Promise<void>;
  readonly isStopping: () => boolean;
}

export const HealthStatusSchema = Type.Object(
  { status: Type.String({ description: '`ok` (liveness) or `ready` (readiness).' }) },
  { $id: 'HealthStatus', description: 'A probe answer.' },
);

function probeAnswer(description: string) {
  return { description, content: { 'application/json': { schema: HealthStatusSchema } } };
}

export function registerHealthRoutes(app: FastifyInstance, options: HealthOptions): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getLiveness',
        summary: 'Liveness: the process answers',
        description: 'Always 200 while the process runs; needs nothing else.',
        tags: ['operations'],
        response: { 200: probeAnswer('Alive: `{"status":"ok"}`') },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: the store answers and its migrations are applied',
        description:
          '503 (with Retry-After) while the store is unreachable and from the start of a graceful shutdown. Spends the read budget of the rate limits (a probe every few seconds is far within it).',
        tags: ['operations'],
        response: {
          200: probeAnswer('Ready: `{"status":"ready"}`'),
          ...problemResponses(429, 503),
        },
      },
    },
    async () => {
      if (options.isStopping()) {
        throw new AppError(ErrorKinds.storeUnavailable, 'The service is shutting down.', {
          headers: { 'retry-after': '1' },
        });
      }
      // Whatever the store's failure, it is not ready: a 503 that balancers understand, never a 500.
      await options.ping().catch((error: unknown) => {
        if (isAppError(error) && error.status === 503) throw error;
        throw new AppError(ErrorKinds.storeUnavailable, 'The store does not answer.', {
          headers: { 'retry-after': '1' },
          cause: error,
        });
      });
      return { status: 'ready' };
    },
  );
}
