/**
 * The request-log fields the filter language knows (docs/api.md "Filter language"), for checking a
 * filter before it is sent and suggesting the field meant when a name is not one of them. Pure. A test
 * (test/ui/layout-units.pure.test.ts) keeps this list equal to the server's registry.
 */
export const FILTER_FIELDS: readonly string[] = [
  'customer_identifier',
  'custom_identifier',
  'thread_identifier',
  'prompt_id',
  'unique_id',
  'trace_unique_id',
  'span_name',
  'span_workflow_name',
  'model',
  'deployment_name',
  'provider_id',
  'status_code',
  'status',
  'error_message',
  'error_code',
  'environment',
  'log_type',
  'stream',
  'fallback_used',
  'cache_hit',
  'temperature',
  'max_tokens',
  'cost',
  'latency',
  'tokens_per_second',
  'time_to_first_token',
  'prompt_tokens',
  'completion_tokens',
  'total_request_tokens',
  'total_tokens',
  'all_tokens',
  'customer_email',
  'workflow_name',
  'error_count',
  'failed',
  'timestamp',
  'start_time',
  'foundation_model',
  'organization_key__name',
  'api_key_id',
  'routing_time',
  // The log's words (operator '' only: every term, ignoring case; `search:"refund policy"`).
  'search',
];

/** Map fields: any key after the prefix is a field (metadata keys and evaluator ids are open sets). */
const MAP_PREFIXES = ['metadata__', 'scores__'];

export const isKnownField = (name: string, known: readonly string[] = FILTER_FIELDS): boolean =>
  known.includes(name) || MAP_PREFIXES.some((p) => name.startsWith(p) && name.length > p.length);

/**
 * Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbouring letters
 * as one edit (optimal string alignment): "modle" is one slip from "model".
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known name nearest to `name` (ties: the first in `known`), when it is near enough to be a slip:
 * at most a third of the name's letters (at least 1, at most 3) differ. Case is ignored.
 */
export function nearestField(name: string, known: readonly string[] = FILTER_FIELDS): string | null {
  const typed = name.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(typed.length / 3)));
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(typed, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= limit ? best : null;
}

/**
 * The field names an "unknown field" error of the API lists after "filterable:" (the API's own list,
 * e.g. "Unknown filter field 'modle'; filterable: customer_identifier, model, …, metadata__<key>."),
 * or null when the message holds none.
 */
export function fieldsInMessage(message: string): string[] | null {
  const match = /filterable: (.*?)\.?$/.exec(message);
  if (!match) return null;
  return match[1]
    .split(',')
    .map((f) => f.trim())
    .filter((f) => /^[a-z_][a-z0-9_]*$/.test(f));
}

/** A filter the explorer did not apply: why, and the field meant when one is near. */
export interface Refusal {
  message: string;
  /** The nearest known field to the one refused, for "did you mean …?". */
  suggestion: { from: string; to: string } | null;
  /** Every field the filter language knows, as the API listed them (or the UI knows them). */
  fields: readonly string[];
}
