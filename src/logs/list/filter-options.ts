/**
 * filter_options for the request-log list: value choices counted over the call's time range and
 * environment scope (not its filters), at most 100 per field, most frequent first. Whole hours and
 * days come from the facet counts (facets.ts), the partial hours at the edges from the logs.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import {
  type FilterOption,
  fieldOption,
  MAX_VALUE_CHOICES,
  metadataOption,
  optionFields,
  type ValueChoice,
} from '../../filters/options.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { planFacetRanges } from './facet-ranges.js';
import { facetRowsComplete, facetRowsOf } from './facet-rows.js';
import { DAY_MS, HOUR_MS } from '../facets.js';
import { type LogScope, scopeWhere } from './scope.js';

/** Metadata keys offered at most; each key's values are bounded like any field's. */
const MAX_METADATA_KEYS = 50;

const METADATA_PREFIX = 'metadata__';

/** Counts by value text, per facet field name. */
export type Tally = Map<string, number>;

const addTo = (tally: Tally, value: string, count: number) => tally.set(value, (tally.get(value) ?? 0) + count);

export async function logFilterOptions(db: Kysely<Database>, scope: LogScope): Promise<Record<string, FilterOption>> {
  return filterOptionsOf(await scopeTallies(db, scope));
}

/**
 * Every value's count of every selection field, and of the first MAX_METADATA_KEYS metadata keys
 * with values in the range, over the scope (no filter), whole: field name → value text → count.
 */
/**
 * The scope's counts of every offered field's values; of the column fields only those `columns` names
 * when it is given (the metadata fields always: which of them are offered depends on them).
 */
export async function scopeTallies(
  db: Kysely<Database>,
  scope: LogScope,
  columns?: ReadonlySet<string>,
): Promise<Map<string, Tally>> {
  const { plan, pieces } = piecesOf(scope);
  const tallies = new Map<string, Tally>();
  const tallyOf = (field: string) => {
    let tally = tallies.get(field);
    if (!tally) tallies.set(field, (tally = new Map()));
    return tally;
  };
  const fromFacets = (field: string) => facetSums(db, scope, pieces, field, tallyOf(field));

  // Side by side on the read connections: one field (customer_identifier, with thousands of values)
  // can take most of the time.
  const fields = optionFields(LOG_FIELDS).filter((def) => def.choices && (!columns || columns.has(def.name)));
  const columnsRead = () =>
    Promise.all(fields.map((def) => columnTallyInto(db, scope, def.name, def.column, tallyOf(def.name))));
  for (const def of fields) tallyOf(def.name);

  const metadataRead = async () => {
    // Keys in order, until enough of them have values in the range: an organization may have used
    // thousands of keys over time, and each costs a query.
    let keysWithValues = 0;
    for (const key of await metadataKeys(db, scope.organizationId)) {
      if (keysWithValues >= MAX_METADATA_KEYS) break;
      await fromFacets(METADATA_PREFIX + key);
      if ((tallies.get(METADATA_PREFIX + key)?.size ?? 0) > 0) keysWithValues += 1;
    }
    for (const [from, to] of plan.raw) {
      const rows = await db
        .selectFrom('log_metadata as m')
        .innerJoin('logs', 'logs.id', 'm.log_id')
        .where((eb) => scopeWhere(eb, { ...scope, start: from, end: to }))
        .where('m.organization_id', '=', scope.organizationId)
        .select(['m.key', 'm.value_text', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy(['m.key', 'm.value_text'])
        .execute();
      for (const r of rows) addTo(tallyOf(METADATA_PREFIX + r.key), r.value_text, Number(r.n));
    }
  };
  await Promise.all([columnsRead(), metadataRead()]);
  return tallies;
}

/** The metadata fields (metadata__KEY) offered from these tallies: those with values, at most MAX_METADATA_KEYS. */
export const offeredMetadataFields = (tallies: Map<string, Tally>) =>
  [...tallies.keys()]
    .filter((field) => field.startsWith(METADATA_PREFIX) && (tallies.get(field)?.size ?? 0) > 0)
    .sort()
    .slice(0, MAX_METADATA_KEYS);

/** filter_options from counts: every option field, and the offered metadata keys, each with its top choices. */
export function filterOptionsOf(
  tallies: Map<string, Tally>,
  metadataFields = offeredMetadataFields(tallies),
): Record<string, FilterOption> {
  const fields = optionFields(LOG_FIELDS);
  const options: Record<string, FilterOption> = {};
  for (const def of fields) {
    const parse = def.type === 'integer' ? Number : String;
    options[def.name] = fieldOption(def, def.choices ? topChoices(tallies.get(def.name), parse) : []);
  }
  for (const field of metadataFields) {
    const key = field.slice(METADATA_PREFIX.length);
    options[field] = metadataOption(key, topChoices(tallies.get(field), String));
  }
  return options;
}

type Piece = [grain: number, from: number, to: number];

function piecesOf(scope: LogScope) {
  const plan = planFacetRanges(scope.start, scope.end);
  const pieces: Piece[] = [
    ...(plan.days ? [[DAY_MS, ...plan.days] as Piece] : []),
    ...plan.hours.map(([from, to]) => [HOUR_MS, from, to] as Piece),
  ];
  return { plan, pieces };
}

/** The stored counts of one field (facet-rows.ts) in the scope's whole buckets (`pieces`). */
function facetRows(db: Kysely<Database>, scope: LogScope, pieces: Piece[], field: string) {
  return facetRowsOf(db, field)
    .where('f.organization_id', '=', scope.organizationId)
    .where((eb) =>
      eb.or(
        pieces.map(([grain, from, to]) =>
          eb.and([eb('f.grain_ms', '=', grain), eb('f.bucket_start', '>=', from), eb('f.bucket_start', '<', to)]),
        ),
      ),
    )
    .$if(scope.isTest !== null, (q) => q.where('f.is_test', '=', scope.isTest ? 1 : 0));
}

/** Summed facet counts of one field over the whole buckets of the range, added into `tally`. */
async function facetSums(db: Kysely<Database>, scope: LogScope, pieces: Piece[], field: string, tally: Tally) {
  if (pieces.length === 0) return;
  const rows = await facetRows(db, scope, pieces, field)
    .select(['f.value_text', (eb) => eb.fn.sum<number>('f.log_count').as('n')])
    .groupBy('f.value_text')
    .execute();
  for (const r of rows) addTo(tally, r.value_text, Number(r.n));
}

/** How a column field's counts are read: piecesOf's, or the whole range from the logs while its stored counts are incomplete. */
async function columnPieces(db: Kysely<Database>, scope: LogScope, field: string) {
  if (await facetRowsComplete(db, field)) return piecesOf(scope);
  return { plan: { raw: [[scope.start, scope.end]] as [number, number][] }, pieces: [] as Piece[] };
}

/**
 * Every value's count of one selection column (a FACET_FIELDS entry) over the scope, no filter: the
 * whole hours and days from the facet counts, the partial hours at the edges from the logs.
 */
export async function columnTally(db: Kysely<Database>, scope: LogScope, field: string, column: string) {
  const tally: Tally = new Map();
  await columnTallyInto(db, scope, field, column, tally);
  return tally;
}

async function columnTallyInto(db: Kysely<Database>, scope: LogScope, field: string, column: string, tally: Tally) {
  const { plan, pieces } = await columnPieces(db, scope, field);
  await facetSums(db, scope, pieces, field, tally);
  for (const [from, to] of plan.raw) {
    const rows = await db
      .selectFrom('logs')
      .where((eb) => scopeWhere(eb, { ...scope, start: from, end: to }))
      .select([sql.ref<string | number>(`logs.${column}`).as('value'), (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(sql.ref(`logs.${column}`))
      .execute();
    // A null (error_code of a call that succeeded) is no value to offer, as the facet counts keep none.
    for (const r of rows) if (r.value !== null) addTo(tally, String(r.value), Number(r.n));
  }
}

/**
 * Whether some log of the scope has, in one selection column (a FACET_FIELDS entry), a value among
 * `values` (`among`) or another value (`!among`; a null is no value: the facet counts keep none, so a
 * nullable column's answer says nothing of its nulls): one facet row of a whole hour or day that says so,
 * or one log of a partial hour at the edges. Each read stops at its first row.
 */
export async function anyColumnValue(
  db: Kysely<Database>,
  scope: LogScope,
  field: string,
  column: string,
  values: string[],
  among: boolean,
): Promise<boolean> {
  const { plan, pieces } = await columnPieces(db, scope, field);
  const op = among ? 'in' : 'not in';
  if (pieces.length > 0) {
    const row = await facetRows(db, scope, pieces, field)
      .select('f.value_text')
      .where('f.value_text', op, values)
      .where('f.log_count', '>', 0)
      .limit(1)
      .executeTakeFirst();
    if (row) return true;
  }
  for (const [from, to] of plan.raw) {
    const row = await db
      .selectFrom('logs')
      .where((eb) => scopeWhere(eb, { ...scope, start: from, end: to }))
      .where(sql.ref(`logs.${column}`), op, values)
      .select(sql<number>`1`.as('one'))
      .limit(1)
      .executeTakeFirst();
    if (row) return true;
  }
  return false;
}

/** The most frequent values first, ties by value; values counted zero times are not offered. */
function topChoices(tally: Tally | undefined, parse: (text: string) => string | number): ValueChoice[] {
  if (!tally) return [];
  return [...tally]
    .filter(([, count]) => count > 0)
    .map(([text, count]) => ({ value: parse(text), count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, MAX_VALUE_CHOICES)
    .map(({ value, count }) => ({ name: String(value), value, count }));
}

/**
 * Every metadata key the organization's facet counts know, read as a loose index scan over the facet
 * fields (one index probe per field, on both databases, whatever the collation) rather than by reading
 * every facet row.
 */
async function metadataKeys(db: Kysely<Database>, organizationId: string): Promise<string[]> {
  const result = await sql<{ field: string | null }>`
    with recursive k(field) as (
      select (select min(field) from log_facets where organization_id = ${organizationId})
      union all
      select (select min(f.field) from log_facets f where f.organization_id = ${organizationId} and f.field > k.field)
      from k where k.field is not null
    )
    select field from k where field is not null`.execute(db);
  return result.rows
    .map((r) => r.field!)
    .filter((field) => field.startsWith(METADATA_PREFIX))
    .map((field) => field.slice(METADATA_PREFIX.length));
}
