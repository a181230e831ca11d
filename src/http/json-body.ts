/**
 * The JSON body parser. It bounds nesting (a body nested thousands deep would otherwise reach code that
 * recurses over it) and never fails the request itself: a body it cannot take becomes a RejectedBody,
 * which an ordinary route turns into its 400 and a proxied route logs first (every authenticated proxied
 * call makes one log, a call refused for its body too).
 */
import type { FastifyInstance } from 'fastify';
import { AppError, RejectedBody } from '../errors.js';

/** Deeper than any chat message, tool schema or metadata object a caller sends. */
export const MAX_JSON_DEPTH = 100;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's handler receives a RejectedBody instead of a 400 from the hook (proxied routes). */
    acceptsRejectedBody?: boolean;
  }
}

/** The deepest nesting of objects and arrays in a parsed value, stopping once it passes `limit`. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  // Fastify's parser: it refuses __proto__ and constructor.prototype keys, as before.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    parse(request, text as string, (err, value) => {
      if (err) {
        return done(null, new RejectedBody(new AppError(400, 'invalid_json', 'The request body is not valid JSON.')));
      }
      if (exceedsDepth(value, MAX_JSON_DEPTH)) {
        const message = `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`;
        return done(null, new RejectedBody(new AppError(400, 'invalid_json', message)));
      }
      done(null, value);
    });
  });
  app.addHook('preHandler', async (request) => {
    if (request.body instanceof RejectedBody && !request.routeOptions.config.acceptsRejectedBody) {
      throw request.body.error;
    }
  });
}
