/**
 * Saved views (docs/api.md "Saved views"): named screens of the web UI, shared by an organization.
 *   POST|GET /api/views/, GET|PATCH|DELETE /api/views/{id}/.
 * A view holds the UI's query string (time window, filters, sort) and the columns shown; gatelog keeps
 * it as given — the UI reads it back as it reads its own URL, dropping what it cannot read.
 */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import type { ViewsTable } from '../../db/schema.js';
import { deleteView, insertView, listViews, requireView, toView, updateView } from '../../views/repository.js';
import { pageOfQuery } from '../plumbing/paging.js';
import { resourceSchemas } from '../plumbing/resource-schemas.js';
import { pagedListSchema, Timestamp } from '../plumbing/schemas.js';

const VIEW_PAGE_SIZE = 100;

const Name = z.string().trim().min(1).max(200).describe('Unique in the organization');
const Query = z
  .string()
  .max(8192)
  .regex(/^(\?[^#\s]*)?$/, 'a query string: empty, or starting with ?')
  .describe("The UI's query string: ?range=…&filters=…&sort=…");
const Columns = z.array(z.string().min(1).max(64)).max(64).describe('Column ids of the log table, in order');

const CreateView = z.strictObject({ name: Name, query: Query, columns: Columns.default([]) });
const PatchView = z.strictObject({ name: Name.optional(), query: Query.optional(), columns: Columns.optional() });

const View = z.object({
  id: z.string().describe('UUID'),
  name: z.string(),
  query: z.string(),
  columns: z.array(z.string()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export function registerViewRoutes(scope: FastifyInstance, deps: AppDeps): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const db = deps.db.db;
  const tags = ['Saved views'];
  const views = resourceSchemas(tags, z.object({ id: z.string().describe("The view's id") }));

  app.post('/api/views/', { schema: views.create('Save a view', CreateView, View, 409) }, async (request, reply) => {
    const now = Date.now();
    const row: ViewsTable = {
      id: crypto.randomUUID(),
      organization_id: request.auth.organizationId,
      name: request.body.name,
      query: request.body.query,
      columns: JSON.stringify(request.body.columns),
      created_at: now,
      updated_at: now,
    };
    await insertView(db, row);
    return reply.status(201).send(toView(row));
  });
  app.get(
    '/api/views/',
    { schema: pagedListSchema(tags, "List the organization's views by name", VIEW_PAGE_SIZE, View) },
    (request) => pageOfQuery(request, deps.config.publicUrl, db, listViews, toView),
  );
  app.get('/api/views/:id/', { schema: views.read('Read a view', View) }, async (request) =>
    toView(await requireView(db, request.auth.organizationId, request.params.id)),
  );
  app.patch(
    '/api/views/:id/',
    { schema: views.change('Rename a view or change what it shows', PatchView, View, 409) },
    async (request) => {
      const row = await requireView(db, request.auth.organizationId, request.params.id);
      const { name, query, columns } = request.body;
      const next: ViewsTable = {
        ...row,
        ...(name !== undefined ? { name } : {}),
        ...(query !== undefined ? { query } : {}),
        ...(columns !== undefined ? { columns: JSON.stringify(columns) } : {}),
        updated_at: Date.now(),
      };
      await updateView(db, next);
      return toView(next);
    },
  );
  app.delete('/api/views/:id/', { schema: views.remove('Delete a view') }, async (request, reply) => {
    const row = await requireView(db, request.auth.organizationId, request.params.id);
    await deleteView(db, row.id);
    return reply.status(204).send(null);
  });
}
