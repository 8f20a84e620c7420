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
import type { ChangeFeed } from '../domain/change-feed.ts';
import type { IdempotencyService } from '../domain/idempotency.ts';
import type { MessageService } from '../domain/message-service.ts';
import type { ReactionService } from '../domain/reaction-service.ts';
import type { AccessLookup } from '../domain/room-access.ts';
import type { RoomService } from '../domain/room-service.ts';
import { createAuthenticator, isApiRequest, registerAuth } from './auth.ts';
import { ClientSlots } from './client-slots.ts';
import { applyConnectionCap, DESCRIPTOR_RESERVE, openFileLimit } from './connection-cap.ts';
import { registerErrorHandling } from './error-handler.ts';
import { registerEventStream } from './event-stream.ts';
import { registerGracefulStop } from './graceful-stop.ts';
import { registerHealthRoutes } from './health-routes.ts';
import { registerBodyParsers } from './json-body.ts';
import { memberRoutes } from './member-routes.ts';
import { messageRoutes } from './message-routes.ts';
import { registerMetrics, type Metrics } from './metrics.ts';
import { registerOpenApi } from './openapi.ts';
import { registerPageRoutes } from './page-routes.ts';
import { registerRateLimits } from './rate-limit.ts';
import { reactionRoutes } from './reaction-routes.ts';
import { readMarkerRoutes } from './read-marker-routes.ts';
import { OneLinePerRequest } from './request-log.ts';
import { requestLoggerFactory } from './request-logger.ts';
import { roomRoutes } from './room-routes.ts';
import { createRouteRegistry } from './route-registry.ts';
import {
  clientErrorHandler,
  frameworkErrorHandler,
  registerSecurity,
  serverOptions,
  trustProxyOption,
} from './security.ts';
import { registerTurnBatching } from './turn-batching.ts';
import { carriesToken } from './url-tokens.ts';
import { userRoomRoutes } from './user-room-routes.ts';
import { parseQuery } from './query-parser.ts';
import { compileValidator } from './validation.ts';
import './request-context.ts';

export interface HttpDeps {
  readonly config: Config;
  readonly service: MessageService;
  readonly rooms: RoomService;
  readonly reactions: ReactionService;
  readonly idempotency: IdempotencyService;
  /** The live change log, for GET /api/events. */
  readonly feed: ChangeFeed;
  /** Who may read which room, kept in step with the feed (event streams judge each change by it). */
  readonly access: AccessLookup;
  readonly ping: () => Promise<void>;
  readonly isStopping: () => boolean;
  readonly logger: Logger;
  /** The registry GET /metrics serves (the store's timings are already in it). */
  readonly metrics: Metrics;
  /** The process's open-file limit; null: unknown (no clamp); undefined: read it (Linux). */
  readonly openFileLimit?: number | null;
}

const REQUEST_ID = /^[A-Za-z0-9._~:-]{1,128}$/;

export async function buildHttpApp(deps: HttpDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const authenticate = createAuthenticator(config);
  const app = Fastify({
    ...serverOptions(config),
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler(() => authenticate),
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new OneLinePerRequest(),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: config.bodyLimit,
    trustProxy: trustProxyOption(config.trustProxy),
    requestTimeout: config.requestTimeoutMs,
    // A request that reaches a stopping server on an open connection is served (see graceful-stop.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // The router counts UTF-16 units of the decoded parameter, and a parameter longer than its
    // limit makes the path unknown (404). A subject is up to 64 code points, 128 units when every
    // one is astral; a longer one must reach validation to be the 400 it is. 16,384: Node's
    // limit on the request head, so no parameter that can arrive is cut off.
    routerOptions: { maxParamLength: 16_384, querystringParser: parseQuery },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(compileValidator);
  app.decorateRequest('actor', null);
  app.decorateRequest('idempotency', null);
  app.decorateRequest('tokenInUrl', false);
  registerBodyParsers(app);
  const routes = createRouteRegistry(app);
  // First of all: requests go on in batches, one per turn of the event loop (see the file).
  if (config.batching) registerTurnBatching(app);
  // Before the error layer's hooks, so its redirects carry these headers too. Any answer to
  // a URL with a token in it is private (auth.ts keeps it so), on any path, whatever answers.
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (carriesToken(request.url)) {
      request.tokenInUrl = true;
      reply.header('cache-control', 'private, no-cache');
    } else if (isApiRequest(request)) {
      reply.header('cache-control', 'no-cache');
    }
    done();
  });
  registerErrorHandling(app, routes);
  registerGracefulStop(app, deps.isStopping, config.shutdownTimeoutMs);
  // In this order: security headers and CORS (so even a 401 is readable
  // cross-origin), then authentication, then the budgets keyed by its subject.
  await registerSecurity(app, config);
  registerAuth(app, config, authenticate);
  await registerRateLimits(app, config);
  applyConnectionCap(app, {
    requested: config.maxConnections,
    openFileLimit: deps.openFileLimit === undefined ? openFileLimit() : deps.openFileLimit,
    reserve: DESCRIPTOR_RESERVE + config.pgPoolSize,
  });

  await registerOpenApi(app);
  registerMetrics(app, deps.metrics, {
    token: config.metricsToken,
    unloadedFollowers: () => deps.feed.unloadedFollowers,
  });
  registerHealthRoutes(app, { ping: deps.ping, isStopping: deps.isStopping });
  await app.register(messageRoutes, {
    service: deps.service,
    idempotency: deps.idempotency,
    maxStreamsPerClient: config.listMaxStreamsPerClient,
    stallTimeoutMs: config.listStallTimeoutMs,
  });
  const lists = {
    slots: new ClientSlots({
      name: 'object-lists',
      what: 'lists of rooms or members without limit at once',
      max: config.listMaxStreamsPerClient,
      retryAfterSeconds: 1,
    }),
    stallTimeoutMs: config.listStallTimeoutMs,
  };
  await app.register(roomRoutes, { rooms: deps.rooms, lists });
  await app.register(memberRoutes, { rooms: deps.rooms, lists });
  await app.register(readMarkerRoutes, { rooms: deps.rooms });
  await app.register(userRoomRoutes, { rooms: deps.rooms });
  await app.register(reactionRoutes, { reactions: deps.reactions });
  registerEventStream(app, {
    feed: deps.feed,
    gate: deps.rooms.gate,
    access: deps.access,
    maxStreams: config.eventsMaxStreams,
    maxStreamsPerClient: config.eventsMaxStreamsPerClient,
    heartbeatMs: config.eventsHeartbeatMs,
  });
  await registerPageRoutes(app, {
    authRequired: authenticate !== null,
    devTokens: config.authDevTokens,
  });
  return app;
}
