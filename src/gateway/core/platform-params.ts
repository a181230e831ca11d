/**
 * The platform parameters every proxied call accepts (docs/api.md "Platform parameters"). They
 * are read from the JSON body or multipart fields, validated, and removed before the call goes
 * upstream. customer_credentials is used for this call only and never stored or echoed.
 */
import { checkMetadata } from '../../logs/indexed-text.js';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { refuseNul } from '../../util/nul.js';
import { noRouting, readRouting, ROUTING_PARAMS, type RoutingParams } from './routing-params.js';
import { MAX_CACHE_TTL_S } from '../../org-settings/settings.js';

export const PLATFORM_PARAMS = [
  'customer_credentials',
  'disable_log',
  'metadata',
  'customer_identifier',
  'customer_email',
  'thread_identifier',
  'request_breakdown',
  ...ROUTING_PARAMS,
  'cache_enabled',
  'cache_ttl',
  'cache_options',
] as const;

export interface PlatformParams {
  /** Per-provider API keys sent with the call. */
  customerCredentials: Record<string, { api_key: string }> | null;
  disableLog: boolean;
  metadata: Record<string, unknown>;
  customerIdentifier: string | undefined;
  customerEmail: string | undefined;
  threadIdentifier: string | undefined;
  requestBreakdown: boolean;
  /** Retries, fallbacks, load balancing (routing-params.ts). */
  routing: RoutingParams;
  /** The response cache as the call asks for it; what it leaves out comes from the organization's settings. */
  cache: CacheParams;
}

export interface CacheParams {
  enabled?: boolean;
  ttl?: number;
  byCustomer?: boolean;
  omitLog?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** true/false, or the multipart spellings "true"/"false"/"1"/"0". */
function flag(value: unknown, name: string): boolean {
  if (value === undefined || value === null) return false;
  if (value === true || value === 'true' || value === '1' || value === 1) return true;
  if (value === false || value === 'false' || value === '0' || value === 0) return false;
  throw new AppError(400, 'invalid_value', `${name} must be a boolean.`, name);
}

function text(value: unknown, name: string, max?: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new AppError(400, 'invalid_value', `${name} must be a string.`, name);
  refuseNul(value, [name]);
  if (max !== undefined && value.length > max) {
    throw new AppError(400, 'invalid_value', `${name} must be at most ${max} characters.`, name);
  }
  return value;
}

function credentials(value: Record<string, unknown> | undefined): PlatformParams['customerCredentials'] {
  if (value === undefined) return null;
  const result: Record<string, { api_key: string }> = {};
  for (const [provider, entry] of Object.entries(value)) {
    const param = `customer_credentials.${provider}.api_key`;
    const key = isObject(entry) ? entry.api_key : undefined;
    if (typeof key !== 'string' || key.trim() === '') {
      throw new AppError(400, 'invalid_value', `${param} must be a non-empty string.`, param);
    }
    result[provider] = { api_key: key };
  }
  return result;
}

/**
 * Takes the platform parameters out of `fields` (which is modified: what is left goes upstream) and
 * validates them.
 */
export function takePlatformParams(fields: Record<string, unknown>): PlatformParams {
  const raw: Record<string, unknown> = {};
  for (const name of PLATFORM_PARAMS) {
    raw[name] = fields[name];
    delete fields[name];
  }
  // The same rules for a JSON body and a form's fields (whose NUL characters no JSON parser has seen):
  // what the log stores must be what both databases take, checked before anything goes upstream.
  const metadata = objectField(raw.metadata, 'metadata');
  refuseNul(metadata, ['metadata']);
  checkMetadata(metadata);
  const customerCredentials = objectField(raw.customer_credentials, 'customer_credentials');
  refuseNul(customerCredentials, ['customer_credentials']);
  return {
    customerCredentials: credentials(customerCredentials),
    disableLog: flag(raw.disable_log, 'disable_log'),
    metadata: metadata ?? {},
    customerIdentifier: text(raw.customer_identifier, 'customer_identifier', 120),
    customerEmail: text(raw.customer_email, 'customer_email'),
    threadIdentifier: text(raw.thread_identifier, 'thread_identifier'),
    requestBreakdown: flag(raw.request_breakdown, 'request_breakdown'),
    routing: readRouting(raw),
    cache: readCache(raw),
  };
}

/** cache_enabled, cache_ttl, cache_options (docs/api.md "Response cache"). */
function readCache(raw: Record<string, unknown>): CacheParams {
  const cache: CacheParams = {};
  if (raw.cache_enabled !== undefined && raw.cache_enabled !== null)
    cache.enabled = flag(raw.cache_enabled, 'cache_enabled');
  const ttl = typeof raw.cache_ttl === 'string' && raw.cache_ttl.trim() !== '' ? Number(raw.cache_ttl) : raw.cache_ttl;
  if (ttl !== undefined && ttl !== null) {
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_CACHE_TTL_S) {
      throw new AppError(
        400,
        'invalid_value',
        `cache_ttl must be a whole number of seconds from 1 to ${MAX_CACHE_TTL_S}.`,
        'cache_ttl',
      );
    }
    cache.ttl = ttl;
  }
  const options = objectField(raw.cache_options, 'cache_options');
  if (options !== undefined) {
    for (const [key, value] of Object.entries(options)) {
      const param = `cache_options.${key}`;
      if (key === 'cache_by_customer') cache.byCustomer = flag(value, param);
      else if (key === 'omit_log') cache.omitLog = flag(value, param);
      else
        throw new AppError(
          400,
          'invalid_value',
          `cache_options has no field ${key} (cache_by_customer, omit_log).`,
          param,
        );
    }
  }
  return cache;
}

/** An object, given as itself (JSON body) or as its JSON text (a multipart field); absent → undefined. */
function objectField(value: unknown, name: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = undefined;
    }
  }
  if (!isObject(parsed))
    throw new AppError(400, 'invalid_value', `${name} must be an object (or its JSON text).`, name);
  return parsed;
}

/** Platform parameters as far as they could be read, for the log of a call rejected while reading them. */
export function emptyPlatformParams(): PlatformParams {
  return {
    customerCredentials: null,
    disableLog: false,
    metadata: {},
    customerIdentifier: undefined,
    customerEmail: undefined,
    threadIdentifier: undefined,
    requestBreakdown: false,
    routing: noRouting(),
    cache: {},
  };
}

/**
 * The platform parameters as the OpenAPI document shows them, beside a proxied call's own fields
 * (takePlatformParams above is what enforces them).
 */
export const PlatformParamsSchema = {
  customer_credentials: z
    .record(z.string(), z.object({ api_key: z.string() }))
    .optional()
    .describe('Provider → {api_key}: keys used for this call only, never stored or echoed'),
  disable_log: z
    .boolean()
    .optional()
    .describe('true: the log keeps metrics only (input, output and messages are null)'),
  metadata: z.record(z.string(), z.unknown()).optional().describe("Stored on the call's log"),
  customer_identifier: z.string().max(120).optional().describe("Your user's tag, stored on the log"),
  customer_email: z.string().optional(),
  thread_identifier: z.string().optional(),
  request_breakdown: z
    .boolean()
    .optional()
    .describe('true: the answer also holds request_breakdown, the call as gatelog logged it'),
  fallback_models: z
    .array(z.string())
    .max(10)
    .optional()
    .describe("Models tried in order when the call's model fails before answering (any provider)"),
  retry_params: z
    .object({
      retry_enabled: z.boolean(),
      num_retries: z.number().int().min(1).max(10).optional().describe('Default 3'),
      retry_after: z
        .number()
        .positive()
        .max(60)
        .optional()
        .describe('Seconds before the first retry, doubled each time; default 0.2'),
    })
    .optional()
    .describe('Retries of a model that failed before answering (a connection failure, a timeout, 408, 409, 429, 5xx)'),
  load_balance_group: z
    .object({
      models: z
        .array(z.object({ model: z.string(), weight: z.number().positive().optional() }))
        .min(1)
        .max(10),
    })
    .optional()
    .describe("The call's model chosen among these in proportion to their weights"),
  disable_fallback: z.boolean().optional().describe('true: fallback_models are not tried'),
  cache_enabled: z
    .boolean()
    .optional()
    .describe("Answer from the response cache (default: the organization's setting)"),
  cache_ttl: z
    .number()
    .int()
    .min(1)
    .max(MAX_CACHE_TTL_S)
    .optional()
    .describe('Seconds the answer is cached; default 30 days'),
  cache_options: z
    .object({ cache_by_customer: z.boolean().optional(), omit_log: z.boolean().optional() })
    .optional()
    .describe('cache_by_customer: entries per customer_identifier; omit_log: no log for a cache hit'),
} satisfies Record<(typeof PLATFORM_PARAMS)[number], z.ZodType>;
