/**
 * The filter language as zod schemas, built from a field registry: the body `{"filters": {...}}` of a
 * list, and the filter_options it answers. The parsers (parse-body.ts, parse-url.ts) stay the ones that
 * enforce the language, to name the exact input at fault and coerce values per field type; these schemas
 * describe the same language for the OpenAPI document, and are built from the same registry so that a
 * field or an operator cannot be in one and not the other (test/search/filter-schema.pure.test.ts checks they agree).
 */
import { z } from 'zod';
import { MAX_SEARCH_TERM_CHARS, MAX_SEARCH_TERMS } from './limits.js';
import { OPERATOR_NAMES } from './options.js';
import {
  type FieldRegistry,
  METADATA_OPERATORS,
  OPERATORS_BY_TYPE,
  SCORE_OPERATORS,
  SEARCH_OPERATORS,
} from './registry.js';
import { OPERATORS, type Operator } from './types.js';

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

const describeOperators = (ops: readonly Operator[]) => ops.map((o) => `'${o}' (${OPERATOR_NAMES[o]})`).join(', ');

function condition(operators: readonly Operator[], valueDescription: string) {
  return z.strictObject({
    operator: z
      .enum(operators as [Operator, ...Operator[]])
      .optional()
      .describe(`One of ${describeOperators(operators)}; default '' (equals)`),
    value: z
      .union([Scalar, z.array(Scalar).min(1)])
      .describe(
        `${valueDescription}. A list is ORed for '' and 'in' (one text with commas is split for 'in'); ` +
          "range operators take one value; isnull takes [true] or [false]; 'not' excludes every value listed",
      ),
  });
}

const VALUE_OF: Record<string, string> = {
  string: 'Text',
  integer: 'Integers (or their decimal text)',
  number: 'Numbers (or their decimal text)',
  boolean: 'true or false (also 1/0 and their text)',
  datetime: 'ISO 8601 times; no offset means UTC',
};

/** `{FIELD: {operator, value}}` over the registry's fields, ANDed. */
export function filtersSchema(registry: FieldRegistry) {
  const fields = Object.fromEntries(
    [...registry.fields.values()].map((def) => [
      def.name,
      condition(OPERATORS_BY_TYPE[def.type], VALUE_OF[def.type]).optional(),
    ]),
  );
  if (registry.search) {
    fields.search = condition(
      SEARCH_OPERATORS,
      "Text: the log's words (input, output, messages, tool-call arguments, error_message) hold every " +
        `whitespace-separated term of a value, ignoring case; at most ${MAX_SEARCH_TERMS} terms in all, ` +
        `${MAX_SEARCH_TERM_CHARS} characters each`,
    ).optional();
  }
  const maps = [
    registry.metadata
      ? `metadata__<key>: a metadata value, compared as text (numerically by lt/lte/gt/gte); operators ${describeOperators(METADATA_OPERATORS)}`
      : '',
    registry.scores
      ? `scores__<evaluator_id>: the log's score from that evaluator; operators ${describeOperators(SCORE_OPERATORS)}`
      : '',
  ].filter(Boolean);
  const object = z.object(fields);
  return (maps.length > 0 ? object.catchall(condition(OPERATORS, 'Text or numbers')) : object.strict()).describe(
    'Filters ANDed, one per field name (docs/api.md "Filter language"). ' + maps.join('. '),
  );
}

/** A list's body: its filters; a URL quick filter on a field replaces the body's filter on it. */
export function filterBodySchema(registry: FieldRegistry) {
  return z.object({ filters: filtersSchema(registry).optional() }).describe('Body filters (POST only)');
}

export const FilterOption = z.object({
  display_name: z.string(),
  metric: z.string().describe('The name to filter by'),
  value_field_type: z.enum(['text', 'number', 'boolean', 'datetime', 'selection']),
  operator_choices: z.array(z.object({ name: z.string(), value: z.enum(OPERATORS) })),
  value_choices: z
    .array(z.object({ name: z.string(), value: Scalar, count: z.number().int() }))
    .describe('The most frequent values in the scope, most frequent first, at most 100'),
});

export const FilterOptions = z
  .record(z.string(), FilterOption)
  .describe('Field name → how to filter by it and its most frequent values, counted over the time range');
