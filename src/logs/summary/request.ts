/**
 * A summary's body (docs/api.md "Analytics") checked and read: every wrong input is a 400 that names it.
 */
import { AppError } from '../../errors.js';
import { checkFilterCount } from '../../filters/limits.js';
import { parseBodyFilters } from '../../filters/parse-body.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { and, type FilterLeaf, type FilterNode } from '../../filters/types.js';
import { parseIsoTime } from '../../util/iso-time.js';
import type { LogScope } from '../list/scope.js';
import { autoBucketSize, BUCKET_NAMES, type BucketName, bucketSizeOf, type BucketSize } from './buckets.js';
import { zoneFormatter } from '../../util/time-zone.js';

export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99', 'error_rate'] as const;
export type Aggregate = (typeof AGGREGATES)[number];

/** Metric fields that are log columns; `scores__<evaluator_id>` besides. */
export const METRIC_COLUMNS = [
  'cost',
  'latency',
  'time_to_first_token',
  'routing_time',
  'prompt_tokens',
  'completion_tokens',
  'total_request_tokens',
  'tokens_per_second',
] as const;

/** Group-by fields that are log columns (name → column); `metadata__<key>` besides. */
export const GROUP_COLUMNS: Record<string, string> = {
  model: 'model',
  provider_id: 'provider_id',
  customer_identifier: 'customer_identifier',
  status: 'status',
  status_code: 'status_code',
  log_type: 'log_type',
  environment: 'environment',
  organization_key__name: 'organization_key_name',
  cache_hit: 'cache_hit',
};

export const MAX_METRICS = 20;
export const MAX_GROUP_BY = 2;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
/** The longest range a summary covers: the zone's offsets are looked up day by day over it. */
export const MAX_RANGE_YEARS = 20;
/**
 * The most values one answer may hold (buckets × series with the totals × metrics): about 2 MB of JSON.
 * The largest answer the other bounds allow (1,500 buckets × 102 series × 20 metrics) is 3 million values,
 * a 12 MB answer built and written on the event loop while every other request waits.
 */
export const MAX_ANSWER_VALUES = 250_000;

/** A log field a metric reads: a column, or one evaluator's score. */
export type MetricField = { kind: 'column'; column: string } | { kind: 'score'; evaluatorId: string };
export type GroupField = { name: string } & ({ kind: 'column'; column: string } | { kind: 'metadata'; key: string });

export interface Metric {
  /** null: count and error_rate over the logs themselves. */
  field: MetricField | null;
  agg: Aggregate;
}

export interface SummaryRequest {
  scope: LogScope;
  filter: FilterNode | null;
  size: BucketSize;
  tz: string;
  metrics: Metric[];
  groupBy: GroupField[];
  limit: number;
  /**
   * true: read the logs themselves; false: the rollups wherever they can answer; null: whichever is
   * faster for this range (docs/api.md "Analytics").
   */
  exact: boolean | null;
}

const KEYS = [
  'start_time',
  'end_time',
  'is_test',
  'all_envs',
  'environment',
  'filters',
  'bucket',
  'tz',
  'metrics',
  'group_by',
  'limit',
  'exact',
];

const bad = (param: string, message: string) => new AppError(400, 'invalid_value', `${param}: ${message}`, param);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function time(body: Record<string, unknown>, name: string): number | undefined {
  const raw = body[name];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const ms = typeof raw === 'string' ? parseIsoTime(raw) : null;
  if (ms === null) throw bad(name, `must be an ISO 8601 datetime; got ${JSON.stringify(raw)}.`);
  return ms;
}

function flag(body: Record<string, unknown>, name: string): boolean | undefined {
  const raw = body[name];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw bad(name, `must be true or false; got ${JSON.stringify(raw)}.`);
}

function metricOf(raw: unknown, i: number): Metric {
  const at = `metrics.${i}`;
  if (!isObject(raw)) throw bad(at, 'must be an object {field, agg}.');
  const extra = Object.keys(raw).find((k) => k !== 'field' && k !== 'agg');
  if (extra !== undefined) throw bad(`${at}.${extra}`, 'a metric takes only field and agg.');
  if (typeof raw.agg !== 'string' || !(AGGREGATES as readonly string[]).includes(raw.agg)) {
    throw bad(`${at}.agg`, `unknown aggregate ${JSON.stringify(raw.agg)}; allowed: ${AGGREGATES.join(', ')}.`);
  }
  const agg = raw.agg as Aggregate;
  const name = raw.field;
  const allowed = `${METRIC_COLUMNS.join(', ')}, scores__<evaluator_id>`;
  if (name === undefined || name === null) {
    if (agg === 'count' || agg === 'error_rate') return { field: null, agg };
    throw bad(`${at}.field`, `aggregate '${agg}' needs a field; allowed: ${allowed}.`);
  }
  if (typeof name !== 'string') throw bad(`${at}.field`, `must be a string; allowed: ${allowed}.`);
  // error_rate is over the logs themselves: a field given with it (the shape every metric has) is ignored.
  if (agg === 'error_rate') return { field: null, agg };
  if ((METRIC_COLUMNS as readonly string[]).includes(name)) return { field: { kind: 'column', column: name }, agg };
  if (name.startsWith('scores__') && name.length > 'scores__'.length && !name.includes('\u0000')) {
    return { field: { kind: 'score', evaluatorId: name.slice('scores__'.length) }, agg };
  }
  throw bad(`${at}.field`, `unknown metric field ${JSON.stringify(name)}; allowed: ${allowed}.`);
}

function groupOf(raw: unknown, i: number): GroupField {
  const at = `group_by.${i}`;
  const allowed = `${Object.keys(GROUP_COLUMNS).join(', ')}, metadata__<key>`;
  if (typeof raw !== 'string') throw bad(at, `must be a field name; allowed: ${allowed}.`);
  const column = GROUP_COLUMNS[raw];
  if (Object.hasOwn(GROUP_COLUMNS, raw)) return { name: raw, kind: 'column', column };
  if (raw.startsWith('metadata__') && raw.length > 'metadata__'.length && !raw.includes('\u0000')) {
    return { name: raw, kind: 'metadata', key: raw.slice('metadata__'.length) };
  }
  throw bad(at, `unknown group-by field ${JSON.stringify(raw)}; allowed: ${allowed}.`);
}

/** The summary a body asks for, for the caller's organization; `now` is the default end. */
export function parseSummaryBody(organizationId: string, body: unknown, now = Date.now()): SummaryRequest {
  if (body === undefined || body === null) body = {};
  if (!isObject(body)) throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
  const unknown = Object.keys(body).find((k) => !KEYS.includes(k));
  if (unknown !== undefined) throw bad(unknown, `unknown parameter; allowed: ${KEYS.join(', ')}.`);

  const endTime = time(body, 'end_time') ?? now;
  const startTime = time(body, 'start_time') ?? endTime - 3_600_000;
  if (startTime > endTime) throw bad('start_time', 'must not be after end_time.');
  if (endTime - startTime > MAX_RANGE_YEARS * 366 * 86_400_000) {
    throw bad('start_time', `a summary covers at most ${MAX_RANGE_YEARS} years.`);
  }
  const isTestFlag = flag(body, 'is_test');
  const allEnvs = flag(body, 'all_envs');
  const isTest = isTestFlag !== undefined ? isTestFlag : allEnvs ? null : false;
  const scope: LogScope = { organizationId, start: startTime, end: endTime, isTest };

  const leaves: FilterNode[] = parseBodyFilters(LOG_FIELDS, body.filters);
  const environment = body.environment;
  if (environment !== undefined && environment !== null) {
    if (typeof environment !== 'string' || environment === '') throw bad('environment', 'must be a non-empty string.');
    const leaf: FilterLeaf = {
      kind: 'leaf',
      target: { kind: 'column', name: 'environment' },
      operator: '',
      values: [environment],
    };
    leaves.push(leaf);
  }
  checkFilterCount(leaves.length, 'filters');
  const filter = leaves.length === 0 ? null : leaves.length === 1 ? leaves[0] : and(leaves);

  const tzRaw = body.tz ?? 'UTC';
  if (typeof tzRaw !== 'string' || tzRaw === '') throw bad('tz', 'must be an IANA time zone name such as UTC.');
  const tz = zoneFormatter(tzRaw).resolvedOptions().timeZone;

  const bucket = body.bucket ?? 'auto';
  if (typeof bucket !== 'string' || !(BUCKET_NAMES as readonly string[]).includes(bucket)) {
    throw bad('bucket', `unknown bucket ${JSON.stringify(bucket)}; allowed: ${BUCKET_NAMES.join(', ')}.`);
  }
  const size =
    bucket === 'auto' ? autoBucketSize(startTime, endTime) : bucketSizeOf(bucket as Exclude<BucketName, 'auto'>);

  const rawMetrics = body.metrics ?? [{ agg: 'count' }];
  if (!Array.isArray(rawMetrics) || rawMetrics.length === 0 || rawMetrics.length > MAX_METRICS) {
    throw bad('metrics', `must be a list of 1 to ${MAX_METRICS} metrics {field, agg}.`);
  }
  const metrics = rawMetrics.map(metricOf);

  const rawGroups = body.group_by ?? [];
  if (!Array.isArray(rawGroups) || rawGroups.length > MAX_GROUP_BY) {
    throw bad('group_by', `must be a list of at most ${MAX_GROUP_BY} fields.`);
  }
  const groupBy = rawGroups.map(groupOf);
  if (groupBy.length === 2 && groupBy[0].name === groupBy[1].name) throw bad('group_by.1', 'repeats group_by.0.');

  const limit = body.limit ?? DEFAULT_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw bad('limit', `must be an integer from 1 to ${MAX_LIMIT}; got ${JSON.stringify(limit)}.`);
  }
  const exact = flag(body, 'exact') ?? null;
  return { scope, filter, size, tz, metrics, groupBy, limit, exact };
}
