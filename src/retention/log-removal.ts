/**
 * The retention sweep's writes, one small batch per transaction so that no writer waits long behind
 * them: old logs deleted with everything that hangs off them, and old logs' content cleared.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { FACET_FIELDS } from '../logs/facets.js';
import { removeLogs } from '../logs/repository.js';
import { ROLLUP_SOURCE_COLUMNS } from '../logs/rollups/rollup-deltas.js';
import { clearSearchText } from '../logs/search/search-store.js';

/**
 * The columns that hold what was said (prompts, completions, tool-call arguments, transcripts); every
 * metric, tag and identifier stays.
 */
export const CONTENT_COLUMNS = [
  'input',
  'output',
  'prompt_messages',
  'completion_message',
  'tool_calls',
  'transcript',
  'input_preview',
  'output_preview',
] as const;

/** A time range [lo, hi) in epoch ms. */
export interface TimeRange {
  lo: number;
  hi: number;
}

/**
 * Deletes up to `limit` of the organization's logs older than `before`, with their scores, metadata rows
 * and facet counts, in one transaction, but those in `waiting` (PostgreSQL: months waiting to be detached
 * whole, whose partitions the query then never reads). Answers how many went (not those a route deleted
 * meanwhile) and whether the batch was full (more may be left).
 */
export async function deleteLogsBefore(
  db: Kysely<Database>,
  organizationId: string,
  before: number,
  limit: number,
  waiting: readonly TimeRange[] = [],
): Promise<{ deleted: number; more: boolean }> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('logs')
      .select([...new Set(['id' as const, ...ROLLUP_SOURCE_COLUMNS, ...FACET_FIELDS.map((f) => f.column as 'model')])])
      .where('organization_id', '=', organizationId)
      .where('timestamp', '<', before)
      .$if(waiting.length > 0, (q) =>
        q.where((eb) => eb.and(waiting.map((m) => eb.or([eb('timestamp', '<', m.lo), eb('timestamp', '>=', m.hi)])))),
      )
      .limit(limit)
      .execute();
    return { deleted: await removeLogs(trx, rows), more: rows.length === limit };
  });
}

/** Where a walk through an organization's old logs has got to: (timestamp, id) of the last one seen. */
export interface ContentCursor {
  timestamp: number;
  id: number;
}

/**
 * Clears the content of up to `limit` of the organization's logs older than `before`, walking forward
 * from `after` (null: the oldest). Answers how many it changed, where it got to (the next walk starts
 * there, so a log is looked at once) and whether it reached `before`.
 * The walk, rather than a search for logs that still hold content, keeps each batch an index seek however
 * many logs were cleared before.
 */
export async function clearContentBefore(
  db: Kysely<Database>,
  organizationId: string,
  before: number,
  after: ContentCursor | null,
  limit: number,
): Promise<{ cleared: number; cursor: ContentCursor | null; done: boolean }> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('logs')
      .select(['id', 'timestamp'])
      .where('organization_id', '=', organizationId)
      .where('timestamp', '<', before)
      .$if(after !== null, (q) =>
        q.where((eb) =>
          eb.or([
            eb('timestamp', '>', after!.timestamp),
            eb.and([eb('timestamp', '=', after!.timestamp), eb('id', '>', after!.id)]),
          ]),
        ),
      )
      .orderBy('timestamp')
      .orderBy('id')
      .limit(limit)
      .execute();
    const last = rows.at(-1);
    if (!last) return { cleared: 0, cursor: after, done: true };
    const cleared = await trx
      .updateTable('logs')
      .set(Object.fromEntries(CONTENT_COLUMNS.map((c) => [c, null])))
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .where((eb) => eb.or(CONTENT_COLUMNS.map((c) => eb(c, 'is not', null))))
      .executeTakeFirst();
    // What was said is no longer found by search either.
    if (Number(cleared.numUpdatedRows) > 0)
      await clearSearchText(
        trx,
        rows.map((r) => r.id),
      );
    return {
      cleared: Number(cleared.numUpdatedRows),
      cursor: { timestamp: Number(last.timestamp), id: Number(last.id) },
      done: rows.length < limit,
    };
  });
}
