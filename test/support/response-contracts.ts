/**
 * Checks every answer a test app sends against the response schema its route declares for that
 * status, so the whole suite tests that the OpenAPI document tells the truth. A route that declares
 * responses must declare every status it answers.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodType } from 'zod';

export function checkResponseContracts(app: FastifyInstance): string[] {
  const violations: string[] = [];
  app.addHook('onSend', (request, reply, payload, done) => {
    const declared = request.routeOptions.schema?.response as Record<string, ZodType> | undefined;
    if (declared === undefined) return done();
    const where = `${request.method} ${request.routeOptions.url} → ${reply.statusCode}`;
    const status = reply.statusCode;
    const schema = declared[status] ?? declared[`${Math.floor(status / 100)}xx`] ?? declared.default;
    if (schema === undefined) {
      violations.push(`${where}: status not declared`);
      return done();
    }
    if (reply.statusCode === 204) return done();
    const type = String(reply.getHeader('content-type') ?? '');
    // A redirect (the web UI's /ui to /ui/) has no body to check.
    if (status >= 300 && status < 400 && (payload === undefined || payload === null)) return done();
    // A file sent as a stream (the web UI's scripts and styles) is bytes, not a document a schema describes.
    if (typeof (payload as { pipe?: unknown } | null)?.pipe === 'function') return done();
    // A compressed page (the web UI's index.html) is checked by the UI's own tests.
    if (reply.getHeader('content-encoding') !== undefined) return done();
    // Proxied answers are the provider's bytes, passed on as a Buffer.
    const text = Buffer.isBuffer(payload) ? payload.toString('utf8') : payload;
    if (typeof text !== 'string') {
      violations.push(`${where}: the answer is not text (${type})`);
      return done();
    }
    const result = schema.safeParse(type.startsWith('application/json') ? JSON.parse(text) : text);
    if (!result.success) violations.push(`${where}: ${result.error.message}`);
    done();
  });
  return violations;
}
