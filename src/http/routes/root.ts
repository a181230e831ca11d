/**
 * GET / — where a person who opens gatelog's address in a browser lands: the web UI, or this reference
 * (/docs) when the UI is switched off (docs/api.md "Web UI").
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';

export function registerRootRedirect(app: FastifyInstance, uiPath: string | null): void {
  // Relative ("ui/", not "/ui/"): behind a reverse proxy that serves gatelog under a path prefix, the
  // browser stays under it.
  const target = uiPath === null ? 'docs' : `${uiPath.slice(1)}/`;
  const schema = {
    tags: ['Web UI'],
    summary: `Redirects to the web UI (${uiPath ?? '/ui'}/), or to /docs when the UI is switched off`,
    security: [],
    response: { 302: z.string().describe(`redirect to ${target}`) },
  };
  app.get('/', { schema }, async (_request, reply) => reply.redirect(target, 302));
}
