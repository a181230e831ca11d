/**
 * Datasets (docs/api.md "Datasets" and "Dataset logs"):
 *   POST /api/datasets/, GET /api/datasets/ and /api/datasets/list/, GET|PATCH|DELETE /api/datasets/{id}/,
 *   POST /api/datasets/{id}/logs/, POST .../logs/bulk/, DELETE .../logs/delete/, GET|POST .../logs/list/,
 *   GET|PATCH|DELETE .../logs/{log_id}/, POST .../logs/{log_id}/scores/.
 * Every route answers 404 for a dataset of another organization, as for one that does not exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import type { AuthContext } from '../../auth/authenticator.js';
import { withQueryBudget } from '../../db/query-budget.js';
import { DatasetLogItem } from '../../datasets/dataset-log-item.js';
import { DATASET_LOG_FIELDS, DATASET_LOG_PAGE_SIZE } from '../../datasets/fields.js';
import { settleAfterCopy } from '../../datasets/maintenance.js';
import { datasetFilterOptions, listDatasetLogs } from '../../datasets/list.js';
import { DatasetOptionsCache } from '../../datasets/options-cache.js';
import { listDatasets } from '../../datasets/repository.js';
import {
  AddByIds,
  AddedLogs,
  AddLogs,
  BulkAdd,
  CreateDataset,
  Dataset,
  HandWrittenLog,
  PatchDataset,
  PatchDatasetLog,
  RemoveLogs,
} from '../../datasets/schemas.js';
import {
  addHandWrittenLog,
  addLogsByIds,
  bulkAdd,
  createDataset,
  datasetView,
  deleteDataset,
  getDatasetLogItem,
  patchDataset,
  patchDatasetLog,
  removeDatasetLog,
  removeLogs,
  requireDataset,
  requireDatasetLog,
} from '../../datasets/service.js';
import { AppError } from '../../errors.js';
import { createScore } from '../../evaluators/service.js';
import { FilterOptions, filterBodySchema } from '../../filters/schema.js';
import { parseSort, sortChoices } from '../../filters/sort.js';
import { zodToAppError } from '../../util/validation.js';
import { scoreLogSchema, scoreView } from './evaluators.js';
import { listFilter } from '../plumbing/list-filters.js';
import { pageOf, pageOfQuery } from '../plumbing/paging.js';
import { resourceSchemas } from '../plumbing/resource-schemas.js';
import {
  AUTHENTICATED_ERRORS,
  pagedListSchema,
  BODY_ERRORS,
  errors,
  page,
  pageQuery,
  validatedByHandler,
} from '../plumbing/schemas.js';

const DatasetParams = z.object({ dataset_id: z.string().describe("The dataset's id") });
const LogParams = DatasetParams.extend({ log_id: z.string().describe("The dataset log's id") });
const tags = ['Datasets'];
const datasets = resourceSchemas(tags, DatasetParams);
const datasetLogs = resourceSchemas(tags, LogParams);

const sortParam = (name: string) =>
  z
    .string()
    .optional()
    .describe(
      `${sortChoices(DATASET_LOG_FIELDS)} (default unique_id)${name === 'sort_by' ? '; an alias of order_by' : ''}`,
    );

const DatasetLogQuery = z.looseObject({
  ...pageQuery(DATASET_LOG_PAGE_SIZE),
  order_by: sortParam('order_by'),
  sort_by: sortParam('sort_by'),
});

const DatasetLogPage = page(DatasetLogItem).extend({
  filter_options: FilterOptions.describe('Counted over the whole dataset, whatever the filters'),
});

const QUICK_FILTERS =
  'Every query parameter besides those below is a URL quick filter over the dataset-log fields: F=V, or ' +
  'F[value]=V&F[operator]=OP&F[connector]=and|or (docs/api.md "URL quick filters").';

/** The add route's body is one of two shapes: which one decides the schema its errors name fields by. */
function parseAddBody(body: unknown) {
  const isIds = body !== null && typeof body === 'object' && 'log_ids' in body;
  const result = (isIds ? AddByIds : HandWrittenLog).safeParse(body ?? {});
  if (!result.success) throw zodToAppError(result.error);
  return isIds
    ? { kind: 'ids' as const, input: result.data as z.output<typeof AddByIds> }
    : { kind: 'log' as const, input: result.data as z.output<typeof HandWrittenLog> };
}

export function registerDatasetRoutes(scope: FastifyInstance, deps: AppDeps): void {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const db = deps.db.db;
  const optionsCache = new DatasetOptionsCache();
  const dataset = (request: { auth: AuthContext; params: { dataset_id: string } }) =>
    requireDataset(db, request.auth, request.params.dataset_id);

  app.post(
    '/api/datasets/',
    {
      schema: datasets.create(
        'Create a dataset; with a time range, the matching logs are copied in at once',
        CreateDataset,
        Dataset,
        500,
      ),
    },
    async (request, reply) => {
      const created = await createDataset(deps.db, request.auth, request.body);
      settleAfterCopy(deps.db, created.log_count, request.log);
      return reply.status(201).send(created);
    },
  );
  for (const path of ['/api/datasets/', '/api/datasets/list/']) {
    app.get(
      path,
      { schema: pagedListSchema(tags, "The organization's datasets, newest first", DATASET_LOG_PAGE_SIZE, Dataset) },
      (request) => pageOfQuery(request, deps.config.publicUrl, db, listDatasets, datasetView),
    );
  }
  app.get('/api/datasets/:dataset_id/', { schema: datasets.read('Read a dataset', Dataset) }, async (request) =>
    datasetView(await dataset(request)),
  );
  app.patch(
    '/api/datasets/:dataset_id/',
    { schema: datasets.change("Change a dataset's name or description", PatchDataset, Dataset) },
    async (request) => patchDataset(db, await dataset(request), request.body),
  );
  app.delete(
    '/api/datasets/:dataset_id/',
    { schema: datasets.remove('Delete a dataset and its logs (the request logs they were copied from stay)') },
    async (request, reply) => {
      await deleteDataset(deps.db.bulk, await dataset(request));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/datasets/:dataset_id/logs/',
    {
      schema: {
        tags,
        summary: 'Add logs: copies of request logs by log_ids (all or nothing), or one log written by hand',
        params: DatasetParams,
        body: validatedByHandler(AddLogs),
        response: { 201: AddedLogs, ...errors(...BODY_ERRORS, 404, 500) },
      },
    },
    async (request, reply) => {
      const row = await dataset(request);
      const body = parseAddBody(request.body);
      const added =
        body.kind === 'ids'
          ? await addLogsByIds(deps.db.bulk, request.auth, row, body.input)
          : await addHandWrittenLog(db, request.auth, row, body.input);
      return reply.status(201).send(added);
    },
  );
  app.post(
    '/api/datasets/:dataset_id/logs/bulk/',
    {
      schema: {
        tags,
        summary: 'Copy in the request logs of a time range (all environments) that match the filters, sampled',
        params: DatasetParams,
        body: BulkAdd,
        response: { 200: AddedLogs.pick({ added_count: true }), ...errors(...BODY_ERRORS, 404, 500) },
      },
    },
    async (request) => {
      const added = await bulkAdd(deps.db, request.auth, await dataset(request), request.body);
      settleAfterCopy(deps.db, added.added_count, request.log);
      return added;
    },
  );
  app.delete(
    '/api/datasets/:dataset_id/logs/delete/',
    {
      schema: {
        tags,
        summary: 'Remove the dataset logs the filters match, or all of them with is_deleting_all_logs',
        params: DatasetParams,
        body: RemoveLogs,
        response: { 200: z.object({ removed_count: z.number().int() }), ...errors(...BODY_ERRORS, 404, 500) },
      },
    },
    async (request) => removeLogs(deps.db, request.auth, await dataset(request), request.body),
  );

  const list = async (
    request: FastifyRequest<{ Params: z.output<typeof DatasetParams>; Querystring: z.output<typeof DatasetLogQuery> }>,
    reply: FastifyReply,
  ) => {
    const row = await dataset(request);
    const { query } = request;
    if (query.order_by !== undefined && query.sort_by !== undefined) {
      throw new AppError(400, 'invalid_parameter', 'Give order_by or its alias sort_by, not both.', 'sort_by');
    }
    const sortParamName = query.sort_by !== undefined ? 'sort_by' : 'order_by';
    const sort = parseSort(DATASET_LOG_FIELDS, query.order_by ?? query.sort_by, sortParamName);
    const filter = listFilter(request, reply, DATASET_LOG_FIELDS);
    const paging = { page: query.page, pageSize: query.page_size };
    const listRequest = {
      organizationId: request.auth.organizationId,
      datasetId: row.id,
      filter,
      sort,
      paging,
      logCount: Number(row.log_count),
    };
    // On the primary, as the dataset's row: a dataset is what its user just put in it, and its filter
    // options are cached by the row's revision (a replica's older ones would stay until the next change).
    const reader = deps.db.freshReader;
    const { count, items, options } = await withQueryBudget(reply, deps.config.queryTimeoutMs, async () => ({
      ...(await listDatasetLogs(reader, deps.db.dialect, listRequest)),
      options: await optionsCache.get(row.id, Number(row.revision), () => datasetFilterOptions(reader, row.id)),
    }));
    return { ...pageOf(request, deps.config.publicUrl, paging, count, items), filter_options: options };
  };
  const listSchema = (method: 'GET' | 'POST') => ({
    tags,
    summary: "List a dataset's logs: filtered, sorted, paginated, with filter_options",
    description: QUICK_FILTERS,
    params: DatasetParams,
    querystring: DatasetLogQuery,
    ...(method === 'POST' ? { body: validatedByHandler(filterBodySchema(DATASET_LOG_FIELDS)) } : {}),
    response: { 200: DatasetLogPage, ...errors(...(method === 'POST' ? BODY_ERRORS : AUTHENTICATED_ERRORS), 404) },
  });
  app.get('/api/datasets/:dataset_id/logs/list/', { schema: listSchema('GET') }, list);
  app.post('/api/datasets/:dataset_id/logs/list/', { schema: listSchema('POST') }, list);

  app.get(
    '/api/datasets/:dataset_id/logs/:log_id/',
    { schema: datasetLogs.read('Read a dataset log', DatasetLogItem) },
    async (request) => getDatasetLogItem(db, await dataset(request), request.params.log_id),
  );
  app.patch(
    '/api/datasets/:dataset_id/logs/:log_id/',
    {
      schema: datasetLogs.change(
        'Annotate or edit a dataset log; "completed" without annotation_completed_by records the key\'s owner',
        PatchDatasetLog,
        DatasetLogItem,
      ),
    },
    async (request) => patchDatasetLog(db, request.auth, await dataset(request), request.params.log_id, request.body),
  );
  app.delete(
    '/api/datasets/:dataset_id/logs/:log_id/',
    { schema: datasetLogs.remove('Remove a log from the dataset') },
    async (request, reply) => {
      await removeDatasetLog(db, await dataset(request), request.params.log_id);
      return reply.status(204).send(null);
    },
  );
  app.post(
    '/api/datasets/:dataset_id/logs/:log_id/scores/',
    {
      schema: scoreLogSchema(
        tags,
        LogParams,
        'Score a dataset log with an evaluator (one score per evaluator and log)',
      ),
    },
    async (request, reply) => {
      const row = await dataset(request);
      const log = await requireDatasetLog(db, row, request.params.log_id);
      const target = {
        table: 'dataset_log_scores' as const,
        organizationId: row.organization_id,
        logId: Number(log.id),
      };
      const { row: score, evaluatorSlug } = await createScore(db, target, request.body);
      return reply.status(201).send(scoreView(score, evaluatorSlug, String(log.id)));
    },
  );
}
