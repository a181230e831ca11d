/**
 * A log's cost may be unknown (docs/api.md "Costs"): a model neither the price catalog nor the pricing
 * file prices. `cost` stays a NOT NULL number (0 for such a log, so sums and sorts keep working) and
 * `unpriced` says its cost is unknown, which the API shows as `cost: null`. A flag rather than a nullable
 * `cost`: SQLite cannot drop a NOT NULL constraint without rebuilding the logs table and its indexes.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['logs', 'dataset_logs']) {
    await db.schema
      .alterTable(table)
      .addColumn('unpriced', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['logs', 'dataset_logs']) await db.schema.alterTable(table).dropColumn('unpriced').execute();
}
