/** The OpenAPI 3.1 document, generated from the route schemas, and the interactive docs page. */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorKinds } from '../errors.ts';
import { docsContentSecurityPolicy } from './security.ts';
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

Every API response carries \`Cache-Control: no-cache\` and \`X-Request-Id\`.`,
      },
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
