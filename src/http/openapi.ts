/** The OpenAPI 3.1 document, generated from the route schemas, and the interactive docs page. */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorKinds } from '../errors.ts';
import { docsContentSecurityPolicy } from './security.ts';
import { MAX_JSON_DEPTH } from './json-body.ts';
import { MAX_LISTED_ERRORS } from './problem.ts';
import { problemResponses } from './responses.ts';

const problemTable = Object.values(ErrorKinds)
  .map((k) => `| \`${k.type}\` | ${k.status} | ${k.title} |`)
  .join('\n');

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Message service',
        version: '1.0.0',
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
        contact: { name: 'The message service maintainers (see the README)' },
        description: `Chat messages over a JSON HTTP API, with a change stream.

Errors are RFC 9457 problems (\`application/problem+json\`). Their \`type\`s:

| type | status | title |
|---|---|---|
${problemTable}

Every API response carries \`Cache-Control: no-cache\` and \`X-Request-Id\`; any response to a URL
that carries \`access_token\` (its name decoded, in any letter case) is \`Cache-Control: private,
no-cache\`, and a trailing-slash redirect never repeats the token in its \`Location\`.

A validation failure lists one \`errors\` entry per failed rule, at most ${MAX_LISTED_ERRORS} (\`detail\`
then says how many more failed); long names and details are shortened. Bodies nesting arrays and
objects deeper than ${MAX_JSON_DEPTH} levels are refused as malformed.

**Authentication** is off unless the service is given a JWT key (AUTH_JWT_SECRET or
AUTH_JWKS_URL). Then every /api request but this document needs \`Authorization: Bearer <JWT>\`
(401 with \`WWW-Authenticate: Bearer\` otherwise); \`GET /api/events\` also takes
\`?access_token=<JWT>\` (not both: 400). \`/metrics\` then needs a valid bearer JWT too, unless
METRICS_TOKEN is set, which it needs instead. The token's \`sub\` is the author of what it creates; only
the author, or a token with the admin role, may edit or delete a message (403).

**Rate limits** (on by default): separate write (POST, PUT, DELETE) and read budgets per client
(token subject, else address); \`/readyz\` and \`/metrics\` spend the read budget too. Every answer that
counts carries the draft-ietf-httpapi-ratelimit-headers-10
headers \`RateLimit-Policy: "write";q=50;w=10\` and \`RateLimit: "write";r=49;t=10\`; past the budget
the answer is a 429 problem with \`Retry-After\`.`,
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'Only when the service has authentication on (it is off by default).',
          },
        },
      },
      // Optional: a request without a token is fine while authentication is off.
      security: [{}, { bearerAuth: [] }],
      servers: [{ url: '/' }],
      tags: [
        { name: 'messages', description: 'Chat messages' },
        { name: 'events', description: 'The change stream' },
        { name: 'operations', description: 'Health and readiness' },
      ],
    },
  });
  app.get(
    '/api/openapi.json',
    {
      schema: {
        operationId: 'getOpenApiDocument',
        security: [],
        summary: 'This document',
        description: 'The OpenAPI 3.1 document, generated from the schemas that validate requests.',
        tags: ['operations'],
        response: {
          200: {
            description: 'The OpenAPI document',
            content: {
              'application/json': { schema: { type: 'object', additionalProperties: true } },
            },
          },
          ...problemResponses(429, 500),
        },
      },
    },
    // Sent as text, so the response serializer (built for the schema above) leaves it whole.
    async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())),
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { url: '/api/openapi.json' } as Record<string, unknown>,
    transformStaticCSP: docsContentSecurityPolicy,
  });
}
