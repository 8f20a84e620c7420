/** Liveness and readiness. Readiness: the store answers, its migrations are applied, and we are not stopping. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, ErrorKinds } from '../errors.ts';

export interface HealthOptions {
  readonly ping: () => Promise<void>;
  readonly isStopping: () => boolean;
}

const Status = Type.Object({ status: Type.String() });

export function registerHealthRoutes(app: FastifyInstance, options: HealthOptions): void {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness: the process answers',
        tags: ['operations'],
        response: { 200: Status },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the store answers and its migrations are applied',
        tags: ['operations'],
        response: { 200: Status },
      },
    },
    async () => {
      if (options.isStopping()) {
        throw new AppError(ErrorKinds.storeUnavailable, 'The service is shutting down.', {
          headers: { 'retry-after': '1' },
        });
      }
      await options.ping();
      return { status: 'ready' };
    },
  );
}
