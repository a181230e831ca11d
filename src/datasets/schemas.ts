/** Request and answer schemas of the dataset routes (docs/api.md "Datasets"), enforced and documented alike. */
import { z } from 'zod';
import { LOG_FIELDS } from '../filters/registry.js';
import { filtersSchema } from '../filters/schema.js';
import { parseIsoTime } from '../util/iso-time.js';
import { seconds, tokenCount, tokenTotalIssue, usd } from '../logs/log-limits.js';
import { AnnotationCompletedBy } from './dataset-log-item.js';
import { DATASET_LOG_FIELDS } from './fields.js';

/**
 * Characters of JSON text a hand-written dataset log's input (and its output) may hold: examples to
 * annotate and evaluate against, not bulk storage; a list page of them stays small with previews anyway.
 */
export const MAX_HAND_WRITTEN_CHARS = 1024 * 1024;

/** log_ids per call at most: one statement's bound parameters stay within both databases' limits. */
export const MAX_LOG_IDS = 1000;

const time = (what: string) =>
  z
    .string()
    .transform((raw, ctx) => {
      const ms = parseIsoTime(raw);
      if (ms === null) {
        ctx.addIssue({ code: 'custom', message: `must be an ISO 8601 datetime; got '${raw.slice(0, 40)}'` });
        return z.NEVER;
      }
      return ms;
    })
    .describe(`${what}: ISO 8601, no offset means UTC`);

const percentage = (what: string) => z.number().min(0).max(100).describe(`${what}: 0 to 100 (default 100)`);

/** Request-log filters, checked by the filter parser (which names the field at fault). */
const logFilters = filtersSchema(LOG_FIELDS);

export const CreateDataset = z.strictObject({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(10_000).optional(),
  start_time: time('The earliest log to copy in').optional(),
  end_time: time('The latest log to copy in (default: now)').optional(),
  initial_log_filters: logFilters
    .optional()
    .describe('Which logs of the time range to copy in (all environments), as a list body\'s "filters"'),
  sampling: percentage('The share of the matching logs copied in, chosen at random').optional(),
});

export const PatchDataset = z
  .strictObject({ name: z.string().trim().min(1).max(255).optional(), description: z.string().max(10_000).optional() })
  .refine((v) => Object.keys(v).length > 0, { message: 'Give name or description.' });

export const Dataset = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  type: z.enum(['sampling', 'manual']).describe('sampling: created from a time range; manual: created empty'),
  status: z.literal('ready'),
  log_count: z.number().int(),
  completed_annotation_count: z.number().int().describe('Logs whose annotation_status is "completed"'),
  organization_id: z.string(),
  created_at: z.string().describe('ISO 8601 UTC'),
  updated_at: z.string().describe('ISO 8601 UTC'),
});

export const AddByIds = z.strictObject({
  log_ids: z.array(z.string().min(1)).min(1).max(MAX_LOG_IDS).describe('unique_ids of request logs to copy in'),
});

export const HandWrittenLog = z.strictObject({
  input: z.unknown().describe('A chat message list, a text, or any JSON'),
  output: z.unknown().describe('A message, a text, or any JSON'),
  model: z.string().max(512).optional(),
  log_type: z.string().min(1).max(64).optional().describe('Default: chat for a message list, else text'),
  metadata: z.record(z.string(), z.unknown()).optional(),
  // The logging API's bounds: a log either route takes is stored alike on both databases and reads back.
  metrics: z
    .strictObject({
      prompt_tokens: tokenCount.optional(),
      completion_tokens: tokenCount.optional(),
      cost: usd.optional().describe('USD'),
      latency: seconds.optional().describe('Seconds'),
    })
    .superRefine((m, ctx) => {
      const issue = tokenTotalIssue(m.prompt_tokens, m.completion_tokens, ['completion_tokens']);
      if (issue) ctx.addIssue(issue);
    })
    .optional(),
});

export const AddLogs = z.union([AddByIds, HandWrittenLog]);

export const AddedLogs = z.object({
  added_count: z.number().int().describe('Logs added; a log already in the dataset is not added again'),
  ids: z.array(z.string()).describe('The ids of the dataset logs added'),
});

export const BulkAdd = z.strictObject({
  start_time: time('The earliest log to copy in'),
  end_time: time('The latest log to copy in'),
  filters: logFilters.optional(),
  sampling_percentage: percentage('The share of the matching logs copied in, chosen at random').optional(),
});

export const RemoveLogs = z.strictObject({
  filters: filtersSchema(DATASET_LOG_FIELDS).optional().describe('The dataset logs to remove'),
  is_deleting_all_logs: z.boolean().optional().describe('true: remove every log of the dataset'),
});

export const PatchDatasetLog = z
  .strictObject({
    annotation_status: z.string().trim().min(1).max(100).optional(),
    annotation_completed_by: AnnotationCompletedBy.partial().nullable().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    input: z.unknown().optional(),
    output: z.unknown().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: 'Give a field to change.' });
