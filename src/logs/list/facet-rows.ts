/**
 * The stored per-bucket counts of one filter_options field, whichever table keeps them: the facet counts
 * (facets.ts) for every field but one; the customers' rollups (log_customer_rollups) for
 * customer_identifier, which count each customer's logs per hour and day already — a batch of logs of
 * many customers writes those rows once, not twice (docs/decisions.md "Facet counts").
 *
 * Either way the rows read alike: organization_id, grain_ms, bucket_start, is_test, value_text,
 * log_count, one per value and bucket (the customers' rollups have one per environment and log type
 * too; summed, they count the same logs).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { CUSTOMER_ROLLUPS } from '../rollups/rollup-deltas.js';
import { rollupsComplete } from '../rollups/rollup-backfill.js';
import { CUSTOMER_FIELD } from '../facets.js';

/** One field's rows, as a table `f` to select from. */
export function facetRowsOf(db: Kysely<Database>, field: string) {
  if (field === CUSTOMER_FIELD) {
    return db.selectFrom(
      db
        .selectFrom('log_customer_rollups')
        .select([
          'organization_id',
          'grain_ms',
          'bucket_start',
          'is_test',
          'customer_identifier as value_text',
          'log_count',
        ])
        .as('f'),
    );
  }
  return db.selectFrom(
    db
      .selectFrom('log_facets')
      .select(['organization_id', 'grain_ms', 'bucket_start', 'is_test', 'value_text', 'log_count'])
      .where('field', '=', field)
      .as('f'),
  );
}

/**
 * Whether the stored counts of `field` cover every stored log: the customers' rollups do not while
 * their backfill (rollup-backfill.ts) has logs of before them left to add — until then a customer's
 * counts are read from the logs.
 */
export async function facetRowsComplete(db: Kysely<Database>, field: string): Promise<boolean> {
  return field !== CUSTOMER_FIELD || rollupsComplete(db, CUSTOMER_ROLLUPS);
}
