/**
 * filter_options for the request-log list: value choices counted over the call's time range and
 * environment scope (not its filters), at most 100 per field, most frequent first.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import {
  type FilterOption,
  fieldOption,
  MAX_VALUE_CHOICES,
  metadataOption,
  optionFields,
  type ValueChoice,
} from '../filters/options.js';
import { LOG_FIELDS } from '../filters/registry.js';
import { type LogScope, scopeWhere } from './list.js';

/** Metadata keys offered at most; each key's values are bounded like any field's. */
const MAX_METADATA_KEYS = 50;

export async function logFilterOptions(db: Kysely<Database>, scope: LogScope): Promise<Record<string, FilterOption>> {
  const options: Record<string, FilterOption> = {};
  for (const def of optionFields(LOG_FIELDS)) {
    let choices: ValueChoice[] = [];
    if (def.choices) {
      const rows = await db
        .selectFrom('logs')
        .where((eb) => scopeWhere(eb, scope))
        .select([
          sql.ref<string | number>(`logs.${def.column}`).as('value'),
          (eb) => eb.fn.countAll<number>().as('count'),
        ])
        .groupBy(sql.ref(`logs.${def.column}`))
        .orderBy('count', 'desc')
        .orderBy('value')
        .limit(MAX_VALUE_CHOICES)
        .execute();
      choices = rows.map((r) => ({ name: String(r.value), value: r.value, count: Number(r.count) }));
    }
    options[def.name] = fieldOption(def, choices);
  }

  const metadataRows = await db
    .selectFrom('log_metadata as m')
    .innerJoin('logs', 'logs.id', 'm.log_id')
    .where((eb) => scopeWhere(eb, scope))
    .where('m.organization_id', '=', scope.organizationId)
    .select(['m.key', 'm.value_text', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy(['m.key', 'm.value_text'])
    .orderBy('m.key')
    .orderBy('count', 'desc')
    .execute();
  const byKey = new Map<string, ValueChoice[]>();
  for (const row of metadataRows) {
    const list = byKey.get(row.key) ?? [];
    if (list.length < MAX_VALUE_CHOICES)
      list.push({ name: row.value_text, value: row.value_text, count: Number(row.count) });
    byKey.set(row.key, list);
  }
  for (const [key, choices] of [...byKey].slice(0, MAX_METADATA_KEYS)) {
    options[`metadata__${key}`] = metadataOption(key, choices);
  }
  return options;
}
