/**
 * Budgets (docs/api.md "Budgets"): an amount a key, a customer or the organization may spend a day, a
 * week, a month or in all; each period's spend and the reservations of the calls in flight; the
 * reservations themselves, so that those of a node that died expire; and the alerts to deliver.
 */
import { type Kysely, sql } from 'kysely';
import { organizationId, timestamps } from './columns.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('budgets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .$call(organizationId)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applies_to_type', 'text', (c) => c.notNull())
    .addColumn('applies_to_value', 'text', (c) => c.notNull())
    .addColumn('amount_usd', 'double precision', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('tz', 'text', (c) => c.notNull())
    .addColumn('alert_thresholds', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret_encrypted', 'text')
    .addColumn('allow_unpriced', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('budgets_name_idx').on('budgets').columns(['organization_id', 'name']).unique().execute();
  await db.schema
    .createTable('budget_periods')
    .addColumn('budget_id', 'text', (c) => c.notNull().references('budgets.id').onDelete('cascade'))
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('spent_usd', 'double precision', (c) => c.notNull())
    .addColumn('reserved_usd', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('budget_periods_pk', ['budget_id', 'period_start'])
    .execute();
  await db.schema
    .createTable('budget_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('budget_id', 'text', (c) => c.notNull())
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('amount_usd', 'double precision', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('budget_reservations_expiry_idx')
    .on('budget_reservations')
    .column('expires_at')
    .execute();
  await db.schema
    .createTable('budget_alerts')
    .addColumn('budget_id', 'text', (c) => c.notNull().references('budgets.id').onDelete('cascade'))
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('threshold', 'double precision', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .addColumn('given_up_at', 'bigint')
    .addPrimaryKeyConstraint('budget_alerts_pk', ['budget_id', 'period_start', 'threshold'])
    .execute();
  await db.schema
    .createIndex('budget_alerts_due_idx')
    .on('budget_alerts')
    .column('next_attempt_at')
    .where(sql.ref('delivered_at'), 'is', null)
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('budget_alerts').execute();
  await db.schema.dropTable('budget_reservations').execute();
  await db.schema.dropTable('budget_periods').execute();
  await db.schema.dropTable('budgets').execute();
}
