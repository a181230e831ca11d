/**
 * Route contracts: every route declares its params, query, body and answers as zod schemas. The same
 * schemas validate requests (a failure is the usual 400 envelope naming the input, via zodToAppError)
 * and become the OpenAPI 3.1 document (@fastify/swagger, with fastify-type-provider-zod turning zod into
 * JSON Schema) that routes/openapi.ts serves; a route registered after this is in it.
 *
 * Answers are not validated while serving: a page of 1,000 logs would pay for it on every list call.
 * The test suite checks every answer it sees against its declared schema instead (test/support).
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { ZodObject, type ZodType } from 'zod';
import { version } from '../../cli-help.js';
import { AppError } from '../../errors.js';
import { isValidatedByHandler } from './schemas.js';
import { zodToAppError } from '../../util/validation.js';

export async function registerContracts(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler<ZodType>(({ schema, httpPart }) => (data) => {
    if (isValidatedByHandler(schema)) return { value: data };
    if (httpPart === 'querystring') {
      // Only the route's own parameters: a list's URL quick filters are checked by their parser.
      const declared = schema instanceof ZodObject ? Object.keys(schema.shape) : [];
      const repeated = Object.entries(data as Record<string, unknown>).find(
        ([k, v]) => Array.isArray(v) && declared.includes(k),
      );
      if (repeated) {
        const name = repeated[0];
        return { error: new AppError(400, 'invalid_parameter', `${name} may be given only once.`, name) };
      }
    }
    // No body reads as an empty object, so that a missing field is named rather than the body.
    const result = schema.safeParse(httpPart === 'body' ? (data ?? {}) : data);
    // Fastify hands an Error returned here to the error handler as it is: the AppError's envelope.
    return result.success ? { value: result.data } : { error: zodToAppError(result.error) };
  });
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gatelog',
        version: version(),
        description:
          'A self-hostable LLM gateway and observability service. docs/api.md in the repository, served at ' +
          '/docs, explains the conventions (seconds, USD, UTC times), the error envelope, the filter language ' +
          'and the platform parameters.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key made with `gatelog keys create`.' },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
}
