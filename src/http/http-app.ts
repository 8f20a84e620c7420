/**
 * The HTTP adapter: Fastify with strict body parsing, one validator per
 * request part, central error handling, request ids, and every route. Only
 * this folder imports Fastify.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.ts';
import type { IdempotencyService } from '../messages/idempotency.ts';
import type { MessageService } from '../messages/message-service.ts';
import { registerErrorHandling } from './error-handler.ts';
import { registerHealthRoutes } from './health-routes.ts';
import { registerBodyParsers } from './json-body.ts';
import { messageRoutes } from './message-routes.ts';
import { registerMetrics } from './metrics.ts';
import { registerOpenApi } from './openapi.ts';
import { createRouteRegistry } from './route-registry.ts';
import { compileValidator } from './validation.ts';
import './request-context.ts';

export interface HttpDeps {
  readonly config: Config;
  readonly service: MessageService;
  readonly idempotency: IdempotencyService;
  readonly ping: () => Promise<void>;
  readonly isStopping: () => boolean;
  readonly logger: Logger;
}

const REQUEST_ID = /^[A-Za-z0-9._~:-]{1,128}$/;

export async function buildHttpApp(deps: HttpDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    requestTimeout: config.requestTimeoutMs,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(compileValidator);
  app.decorateRequest('actor', null);
  app.decorateRequest('idempotency', null);
  registerBodyParsers(app);
  const routes = createRouteRegistry(app);
  registerErrorHandling(app, routes);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (request.url.startsWith('/api')) reply.header('cache-control', 'no-cache');
  });

  await registerOpenApi(app);
  registerMetrics(app, { token: config.metricsToken });
  registerHealthRoutes(app, { ping: deps.ping, isStopping: deps.isStopping });
  await app.register(messageRoutes, { service: deps.service, idempotency: deps.idempotency });
  return app;
}
