/**
 * Schemas shared by route contracts (contracts.ts): the error envelope, pages, and query parameters
 * that reuse the parsers of query-params.ts, so a parameter is checked the same way on every route.
 */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { MAX_PAGE, MAX_PAGE_SIZE, parsePositiveInt, type Query } from './query-params.js';

export const ErrorEnvelope = z
  .object({
    detail: z.string().describe('The message, for REST-framework clients'),
    error: z.object({
      message: z.string().describe('What was wrong and what is allowed'),
      type: z.enum([
        'invalid_request_error',
        'authentication_error',
        'not_found_error',
        'conflict_error',
        'rate_limit_error',
        'upstream_error',
        'server_error',
      ]),
      param: z.string().nullable().describe('The input at fault as a dotted path (array indexes as .3), or null'),
      code: z.string().describe('A stable machine-readable name of the error'),
      budget: z
        .object({ id: z.string(), name: z.string(), remaining_usd: z.number() })
        .optional()
        .describe('budget_exceeded: the budget that could not hold the call'),
    }),
  })
  .describe('Every error of every route (docs/api.md "Errors")');

/** The envelope under each error status a route may answer. */
export function errors(...statuses: number[]): Record<number, typeof ErrorEnvelope> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope]));
}

/** Errors every authenticated route may answer: a bad request, no valid key, the database busy. */
export const AUTHENTICATED_ERRORS = [400, 401, 503] as const;
/**
 * ...and a route that reads a body: too large, or not JSON. DELETE routes too: a body sent with one is
 * read, and bounded, like any other.
 */
export const BODY_ERRORS = [...AUTHENTICATED_ERRORS, 413, 415] as const;

/** `{count, next, previous, results}` of a paginated list. */
export function page<T extends z.ZodType>(item: T) {
  return z.object({
    count: z.number().int().describe('How many items match in all'),
    next: z.string().nullable().describe('The absolute URL of the next page, or null'),
    previous: z.string().nullable().describe('The absolute URL of the previous page, or null'),
    results: z.array(item),
  });
}

/**
 * A query parameter read by one of query-params.ts's parsers: its 400 (code, message, param) is the
 * parser's own. A repeated parameter never gets here (contracts.ts refuses it first).
 */
export function queryParam<T>(name: string, parse: (query: Query) => T, description: string) {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      try {
        return parse({ [name]: raw });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message, params: { code: err.code, verbatim: true } });
        return z.NEVER;
      }
    })
    .describe(description);
}

export function pageQuery(defaultPageSize: number) {
  return {
    page: queryParam('page', (q) => parsePositiveInt(q, 'page', 1), `Page number, 1 to ${MAX_PAGE} (default 1)`),
    page_size: queryParam(
      'page_size',
      (q) => Math.min(parsePositiveInt(q, 'page_size', defaultPageSize), MAX_PAGE_SIZE),
      `Items per page (default ${defaultPageSize}); more than ${MAX_PAGE_SIZE} is read as ${MAX_PAGE_SIZE}`,
    ),
  };
}

/** The schema of a route that lists an organization's items a page at a time (its page query, `page(item)`). */
export function pagedListSchema<T extends z.ZodType>(tags: string[], summary: string, pageSize: number, item: T) {
  return {
    tags,
    summary,
    querystring: z.object(pageQuery(pageSize)),
    response: { 200: page(item), ...errors(...AUTHENTICATED_ERRORS) },
  };
}

export const Timestamp = z.string().describe('ISO 8601 UTC time, e.g. 2026-11-22T10:00:00.123Z');

const HANDLER_VALIDATED = new WeakSet<z.ZodType>();

/**
 * A schema the route's handler validates with itself (contracts.ts then passes the input through):
 * for routes that must act on a refused input (log it, name a batch entry) before answering 400.
 */
export function validatedByHandler<T extends z.ZodType>(schema: T): T {
  HANDLER_VALIDATED.add(schema);
  return schema;
}

export const isValidatedByHandler = (schema: z.ZodType) => HANDLER_VALIDATED.has(schema);

/** OpenAI's error shape, which providers answer with. */
const ProviderError = z
  .looseObject({ error: z.looseObject({ message: z.string() }) })
  .describe("The provider's error answer, passed through");

/**
 * The errors of a proxied route: gatelog's own statuses (its envelope, or the provider's error answer
 * when the provider answered that status), and any other 4xx/5xx the provider answered, passed through
 * as it came (status, content type and body).
 */
export function proxiedErrors(...statuses: number[]) {
  const passedThrough = z
    .unknown()
    .describe("The provider's answer, passed through as it came: status, content type and body");
  return {
    ...Object.fromEntries(statuses.map((s) => [s, z.union([ErrorEnvelope, ProviderError])])),
    '4xx': passedThrough,
    '5xx': passedThrough,
  };
}
