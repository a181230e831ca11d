/** What each session of a window sums, as both ways of reading them (one GROUP BY, or slices) select it. */
import { sql } from 'kysely';

/** One session's sums. */
export interface SessionSums {
  thread_identifier: string;
  first_seen: number;
  last_seen: number;
  calls: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** The sums' columns of a query grouped by thread_identifier. */
export const sessionSumColumns = () =>
  [
    'logs.thread_identifier',
    sql<number>`min(logs.timestamp)`.as('first_seen'),
    sql<number>`max(logs.timestamp)`.as('last_seen'),
    sql<number>`count(*)`.as('calls'),
    // Failed exactly when its status code is 400 or more, as the log's `failed` and the summary's error_rate.
    sql<number>`sum(case when logs.status_code >= 400 then 1 else 0 end)`.as('errors'),
    sql<number>`sum(logs.cost)`.as('cost'),
    sql<number>`sum(logs.prompt_tokens)`.as('prompt_tokens'),
    sql<number>`sum(logs.completion_tokens)`.as('completion_tokens'),
  ] as const;

const num = (value: unknown) => Number(value ?? 0);

/** A row of those columns as numbers (drivers may give counts and sums as strings or bigints). */
export function sumsOf(row: Record<string, unknown>): SessionSums {
  return {
    thread_identifier: row.thread_identifier as string,
    first_seen: num(row.first_seen),
    last_seen: num(row.last_seen),
    calls: num(row.calls),
    errors: num(row.errors),
    cost: num(row.cost),
    prompt_tokens: num(row.prompt_tokens),
    completion_tokens: num(row.completion_tokens),
  };
}
