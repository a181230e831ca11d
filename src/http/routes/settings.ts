/**
 * The organization's settings and its response cache (docs/api.md "Settings", "Response cache"):
 *   GET|PATCH /api/settings/ — one flat object; PATCH changes the fields it names, answers the whole;
 *   DELETE /api/cache/ — empties the organization's cache.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ResponseCache } from '../../cache/response-cache.js';
import type { AppDeps } from '../../deps.js';
import {
  OrganizationSettings,
  patchSettings,
  readSettings,
  SettingsCache,
  SettingsPatch,
} from '../../org-settings/settings.js';
import { AUTHENTICATED_ERRORS, BODY_ERRORS, errors } from '../plumbing/schemas.js';

export function registerSettingsRoutes(
  scope: FastifyInstance,
  deps: AppDeps,
  settings: SettingsCache,
  cache: ResponseCache,
): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const db = deps.db.db;
  const tags = ['Settings'];
  app.get(
    '/api/settings/',
    {
      schema: {
        tags,
        summary: "The organization's settings",
        response: { 200: OrganizationSettings, ...errors(...AUTHENTICATED_ERRORS) },
      },
    },
    (request) => readSettings(db, request.auth.organizationId),
  );
  app.patch(
    '/api/settings/',
    {
      schema: {
        tags,
        summary: 'Change the settings named in the body; answers them all',
        body: SettingsPatch,
        response: { 200: OrganizationSettings, ...errors(...BODY_ERRORS) },
      },
    },
    async (request) => {
      const next = await patchSettings(db, request.auth.organizationId, request.body);
      settings.forget(request.auth.organizationId);
      return next;
    },
  );
  app.delete(
    '/api/cache/',
    {
      schema: {
        tags: ['Response cache'],
        summary: "Empty the organization's response cache",
        response: {
          200: z.object({ deleted: z.number().int().describe('Entries removed') }),
          ...errors(...BODY_ERRORS),
        },
      },
    },
    async (request) => ({ deleted: await cache.clear(request.auth.organizationId) }),
  );
}
