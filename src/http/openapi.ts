/** The OpenAPI 3.1 document, generated from the route schemas, and the interactive docs page. */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorKinds } from '../errors.ts';

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
  app.get('/api/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(app.swagger()),
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { url: '/api/openapi.json' } as Record<string, unknown>,
  });
}
