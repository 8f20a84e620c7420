/**
 * Request budgets with @fastify/rate-limit: one for writes (POST, PUT,
 * DELETE, PATCH), one for reads, per client: the token's subject when auth
 * is on, else the client address. Fixed windows. They cover /api and the
 * routes outside it that do real work (/readyz pings the store, /metrics
 * renders every series, /auth/dev-token signs); /healthz and the page's
 * static files are free. With REDIS_URL the counters live in Redis and every
 * instance shares them; otherwise each instance counts on its own. Every
 * answer they cover carries the IETF draft's headers
 * (draft-ietf-httpapi-ratelimit-headers-10):
 *
 *   RateLimit-Policy: "write";q=50;w=10     RateLimit: "write";r=49;t=10
 *
 * A 429 adds Retry-After. When Redis cannot be reached requests go through
 * unlimited (and a warning is logged): a budget is protection, not a reason
 * to refuse service.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimitPlugin, { normalizeIP } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { Config, RateLimit } from '../config.ts';
import { AppError, ErrorKinds } from '../errors.ts';
import { isApiRequest } from './auth.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);
/** Routes outside /api that spend a budget too. */
const LIMITED_ROUTES = new Set(['/readyz', '/metrics', '/auth/dev-token']);
/** How many distinct clients one instance keeps counters for without Redis. */
const LOCAL_CACHE_SIZE = 50_000;

type Check = ReturnType<FastifyInstance['createRateLimit']>;

interface Budget {
  readonly name: 'write' | 'read';
  readonly limit: RateLimit;
  readonly check: Check;
}

/** The client a budget belongs to: who the token says, else where the request comes from. */
export function clientKey(request: FastifyRequest): string {
  return request.actor !== null ? `sub:${request.actor.subject}` : `ip:${normalizeIP(request.ip)}`;
}

export async function registerRateLimits(app: FastifyInstance, config: Config): Promise<void> {
  if (config.rateLimitWrite === null && config.rateLimitRead === null) return;

  let redis: Redis | undefined;
  if (config.redisUrl !== null) {
    redis = new Redis(config.redisUrl, {
      // Fail fast instead of queueing while Redis is away; the request goes on unlimited.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      lazyConnect: true,
    });
    redis.on('error', (err: Error) => app.log.warn({ err }, 'rate-limit Redis error'));
    await redis.connect().catch((err: unknown) => {
      app.log.warn(
        { err },
        'rate-limit Redis unreachable at start; budgets not enforced until it is back',
      );
    });
    app.addHook('onClose', async () => {
      await redis?.quit().catch(() => redis?.disconnect());
    });
  }

  await app.register(rateLimitPlugin, {
    global: false,
    cache: LOCAL_CACHE_SIZE,
    ...(redis === undefined ? {} : { redis, nameSpace: `${config.redisKeyPrefix}rate-limit:` }),
  });

  const budget = (name: Budget['name'], limit: RateLimit | null): Budget | null =>
    limit === null
      ? null
      : {
          name,
          limit,
          check: app.createRateLimit({
            max: limit.max,
            timeWindow: limit.windowSeconds * 1000,
            cache: LOCAL_CACHE_SIZE,
            keyGenerator: (request) => `${name}:${clientKey(request)}`,
          } as Parameters<FastifyInstance['createRateLimit']>[0]),
        };
  const write = budget('write', config.rateLimitWrite);
  const read = budget('read', config.rateLimitRead);

  // After authentication (registered before this), so the subject is known.
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    const limited = isApiRequest(request) || (route !== undefined && LIMITED_ROUTES.has(route));
    if (!limited || request.method === 'OPTIONS') return;
    const current = WRITE_METHODS.has(request.method) ? write : read;
    if (current === null) return;
    let result: Awaited<ReturnType<Check>>;
    try {
      result = await current.check(request);
    } catch (err) {
      request.log.warn({ err }, 'rate limit not checked');
      return;
    }
    if (result.isAllowed) return;
    const { name, limit } = current;
    const headers = {
      'ratelimit-policy': `"${name}";q=${limit.max};w=${limit.windowSeconds}`,
      ratelimit: `"${name}";r=${result.remaining};t=${result.ttlInSeconds}`,
    };
    if (!result.isExceeded) {
      reply.headers(headers);
      return;
    }
    throw new AppError(
      ErrorKinds.rateLimited,
      `The ${name} budget of ${limit.max} requests per ${limit.windowSeconds} s is used up; retry in ${result.ttlInSeconds} s.`,
      { headers: { ...headers, 'retry-after': String(Math.max(1, result.ttlInSeconds)) } },
    );
  });
}
