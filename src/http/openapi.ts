/** The OpenAPI 3.1 document, generated from the route schemas, and the interactive docs page. */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { VERSION as version } from '../version.ts';
import { ErrorKinds } from '../errors.ts';
import { docsContentSecurityPolicy } from './security.ts';
import { MAX_JSON_DEPTH } from './json-body.ts';
import { MAX_LISTED_ERRORS } from './problem.ts';
import { problemResponses } from './responses.ts';
import { EVENTS_EXTENSION } from './event-schemas.ts';
import {
  RESPONSE_HEADERS,
  UNLISTED_REQUESTS_EXTENSION,
  UNLISTED_RESPONSES,
  declareCommonHeaders,
  namedSchemas,
  referencingNamed,
} from './openapi-components.ts';

const problemTable = Object.values(ErrorKinds)
  .map((k) => `| \`${k.type}\` | ${k.status} | ${k.title} |`)
  .join('\n');

interface OperationObject {
  readonly operationId?: string;
  readonly requestBody?: { required?: boolean };
  readonly responses?: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, Record<string, unknown>> }
  >;
  'x-events'?: unknown;
}

/**
 * SSE has no place in OpenAPI 3.1: the event types and the schema of each one's
 * data go in `x-events`, and the stream's media type names its item schema in
 * `x-item-schema` (what OpenAPI 3.2 calls `itemSchema`).
 */
function describeEvents(operation: OperationObject): void {
  operation['x-events'] = referencingNamed(EVENTS_EXTENSION);
  const media = operation.responses?.['200']?.content?.['text/event-stream'];
  if (media !== undefined) media['x-item-schema'] = { $ref: '#/components/schemas/StreamEvent' };
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  // The operations whose body may be left out (see OPTIONAL_BODY), seen by `transform`.
  const optionalBodies = new Set<unknown>();
  await app.register(swagger, {
    transform: ({ schema, url, route }) => {
      if ((route.config as { optionalBody?: boolean } | undefined)?.optionalBody === true) {
        optionalBodies.add(schema.operationId);
      }
      return { schema: referencingNamed(schema) as typeof schema, url };
    },
    // The generator marks every request body required.
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const { openapiObject } = documentObject;
      for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
        for (const operation of Object.values(item ?? {}) as OperationObject[]) {
          if (operation.requestBody !== undefined && optionalBodies.has(operation.operationId)) {
            operation.requestBody.required = false;
          }
          declareCommonHeaders(path, operation.responses ?? {});
          // SSE has no place in OpenAPI: the event types and their data, as an extension.
          if (operation.operationId === 'streamEvents') describeEvents(operation);
        }
      }
      return { ...openapiObject, 'x-unlisted-requests': UNLISTED_REQUESTS_EXTENSION };
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Message service',
        version,
        license: { name: 'MIT', identifier: 'MIT' },
        contact: { name: 'The message service maintainers (see the README)' },
        description: `Chat messages over a JSON HTTP API, with a change stream.

Errors are RFC 9457 problems (\`application/problem+json\`). Their \`type\`s:

| type | status | title |
|---|---|---|
${problemTable}

Every API response carries \`Cache-Control: no-cache\` and \`X-Request-Id\`; any response to a URL
that carries \`access_token\` (its name decoded, in any letter case) is \`Cache-Control: private,
no-cache\`, and a trailing-slash redirect never repeats the token in its \`Location\`.
Requests that no operation lists (a known path with a trailing slash: 301/308; a method the path
lacks: 405 with \`Allow\`; an unknown path: 404) are described in \`x-unlisted-requests\`.

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
        schemas: namedSchemas(),
        headers: RESPONSE_HEADERS,
        responses: UNLISTED_RESPONSES,
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
        { name: 'rooms', description: 'Rooms, and the rooms of a subject' },
        { name: 'members', description: 'Memberships of a room' },
        { name: 'read markers', description: "A subject's read position in a room" },
        { name: 'reactions', description: "Subjects' emoji on messages" },
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
