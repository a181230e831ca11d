/**
 * The JSON body parser. It bounds nesting (a body nested thousands deep would otherwise reach code that
 * recurses over it) and refuses NUL characters outside the places a route allows them. A body it cannot
 * take is a 400 — handed to a proxied route as a RejectedBody instead, which logs the call first (every
 * authenticated proxied call makes one log, a call refused for its body too).
 */
import type { FastifyInstance } from 'fastify';
import { AppError, RejectedBody } from '../../errors.js';
import { findNul, nulRefused } from '../../util/nul.js';

/** Deeper than any chat message, tool schema or metadata object a caller sends. */
export const MAX_JSON_DEPTH = 100;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's handler receives a RejectedBody instead of the parser's 400 (proxied routes). */
    acceptsRejectedBody?: boolean;
    /**
     * Where in the body a NUL character may be (values stored as JSON text, where it is escaped, or
     * sent upstream). Anywhere else it is refused: PostgreSQL text cannot hold it, and SQLite must
     * take exactly what PostgreSQL takes.
     */
    nulAllowed?: (path: readonly (string | number)[]) => boolean;
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
    const refuse = (error: AppError) =>
      request.routeOptions.config.acceptsRejectedBody ? done(null, new RejectedBody(error)) : done(error, undefined);
    parse(request, text as string, (err, value) => {
      if (err) return refuse(new AppError(400, 'invalid_json', 'The request body is not valid JSON.'));
      if (exceedsDepth(value, MAX_JSON_DEPTH)) {
        return refuse(
          new AppError(400, 'invalid_json', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`),
        );
      }
      // JSON text holds a NUL only as the escape \u0000: no walk for the bodies without one.
      if ((text as string).includes('\\u0000')) {
        const where = findNul(value, request.routeOptions.config.nulAllowed ?? (() => false));
        if (where !== null) return refuse(nulRefused(where));
      }
      done(null, value);
    });
  });
}
