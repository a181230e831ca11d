/** GET /api/openapi.json: the OpenAPI 3.1 document of every route (plumbing/contracts.ts builds it). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get(
    '/api/openapi.json',
    {
      schema: {
        summary: 'This document: the OpenAPI 3.1 description of every route',
        security: [],
        response: {
          200: z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({}), paths: z.looseObject({}) }),
        },
      },
    },
    async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(documentText),
  );
  // Built once, before the server listens: generating and serializing the document took the main thread
  // for 0.5 s (seconds on a busy machine), which the first caller would otherwise make everyone wait for.
  let documentText = '';
  app.addHook('onReady', async () => {
    documentText = JSON.stringify(app.swagger());
  });
}
