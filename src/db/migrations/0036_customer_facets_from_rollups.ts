/**
 * The facet counts of customer_identifier are read from the customers' rollups (log_customer_rollups,
 * 0034), which count each customer's logs per hour and day too: the log writer stops writing them into
 * log_facets, and the rows there, no longer kept up, go. Until the rollups' backfill has added the logs
 * of before 0034, a customer's counts are read from the logs (src/logs/list/facet-rows.ts).
 */
import { type Kysely, sql } from 'kysely';

const GRAINS = [3_600_000, 86_400_000];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('log_facets').where('field', '=', 'customer_identifier').execute();
}

/** The rows again, counted from the logs, as 0005 first counted them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  for (const grain of GRAINS) {
    const bucket = sql`(logs.timestamp / ${sql.lit(grain)}) * ${sql.lit(grain)}`;
    await sql`insert into log_facets (organization_id, field, grain_ms, bucket_start, is_test, value_text, log_count)
      select logs.organization_id, 'customer_identifier', ${sql.lit(grain)}, ${bucket}, logs.is_test,
        logs.customer_identifier, count(*)
      from logs where logs.customer_identifier is not null
      group by logs.organization_id, ${bucket}, logs.is_test, logs.customer_identifier`.execute(db);
  }
}
