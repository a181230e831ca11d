/**
 * The bulk seed's writer on PostgreSQL (bulk-seed.ts), on a connection of its own, a batch per
 * transaction: ids taken from the logs' sequence beforehand; logs, metadata rows and scores by COPY
 * (pg-copy.ts; into the partitioned logs table's parent, which routes each row to its month); the facet
 * counts and rollups, few rows per batch, upserted from one JSON parameter (json_populate_recordset). On
 * a fresh store the secondary indexes of the loaded tables are dropped first and created after the load.
 */
import pg from 'pg';
import { FACET_CONFLICT, facetDeltas, type FacetSource } from '../src/logs/facets.js';
import { facetSourceOf, metadataRows } from '../src/logs/repository.js';
import { deltaRow, ROLLUP_KINDS, rollupDeltas } from '../src/logs/rollups/rollup-deltas.js';
import { rollupConflict } from '../src/logs/rollups/rollup-writes.js';
import { type BatchWriter, elapsed } from './bulk-seed.js';
import { copyRows } from './pg-copy.js';

/** The tables loaded by COPY, whose secondary indexes a fresh store builds after its load. */
const LOADED_TABLES = ['logs', 'log_metadata', 'scores'];

/** `insert into table (columns) select columns from json_populate_recordset(null::table, $1)`, then `tail`. */
async function jsonInsert(client: pg.Client, table: string, columns: readonly string[], rows: object[], tail = '') {
  const names = columns.map((c) => `"${c}"`).join(', ');
  await client.query(
    `insert into ${table} (${names}) select ${names} from json_populate_recordset(null::${table}, $1::json) ${tail}`,
    [JSON.stringify(rows)],
  );
}

/**
 * The loaded tables' indexes not behind a constraint (primary and unique keys stay: the upserts and
 * the checks need them), as `create index` statements; on the partitioned logs table, the parent's
 * (dropping and creating it does so on every partition).
 */
async function secondaryIndexes(client: pg.Client): Promise<{ name: string; definition: string }[]> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select i.relname as name, pg_get_indexdef(i.oid) as definition
     from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
     join pg_namespace n on n.oid = t.relnamespace
     where n.nspname = current_schema() and t.relname = any($1)
       and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid)`,
    [LOADED_TABLES],
  );
  return rows;
}

export async function postgresBatches(url: string): Promise<BatchWriter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows: any } = await client.query('select 1 from logs limit 1');
  const indexes = any.length === 0 ? await secondaryIndexes(client) : [];
  for (const index of indexes) await client.query(`drop index "${index.name}"`);
  let logColumns: string[] = [];
  const write: BatchWriter['write'] = async (logs, scoresOf) => {
    await client.query('begin');
    try {
      // A bench store rebuilt if the machine fails: no need to wait for each commit's flush.
      await client.query('set local synchronous_commit = off');
      const { rows: taken } = await client.query<{ id: string }>(
        `select nextval(pg_get_serial_sequence('logs', 'id')) as id from generate_series(1, $1)`,
        [logs.length],
      );
      const ids = taken.map((r) => Number(r.id)).sort((a, b) => a - b);
      if (logColumns.length === 0) logColumns = ['id', ...Object.keys(logs[0].row)];
      await copyRows(
        client,
        'logs',
        logColumns,
        logs.map((l, k) => ({ id: ids[k], ...l.row })),
      );
      const sources: FacetSource[] = [];
      const metadata = logs.flatMap((l, k) => {
        const rows = metadataRows(ids[k], l.row, l.metadata);
        sources.push(facetSourceOf(l, rows));
        return rows;
      });
      if (metadata.length > 0) await copyRows(client, 'log_metadata', Object.keys(metadata[0]), metadata);
      const scores = scoresOf(ids);
      if (scores.length > 0) await copyRows(client, 'scores', Object.keys(scores[0]), scores as never[]);
      const facets = facetDeltas(sources);
      await jsonInsert(client, 'log_facets', Object.keys(facets[0]), facets, FACET_CONFLICT);
      const rollups = rollupDeltas(logs.map((l) => l.row));
      for (const kind of ROLLUP_KINDS) {
        const rows = rollups.filter((d) => d.kind === kind).map(deltaRow);
        if (rows.length === 0) continue;
        await jsonInsert(client, kind.table, [...kind.keyColumns, ...kind.valueColumns], rows, rollupConflict(kind));
      }
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    }
  };
  const finish = async () => {
    const started = performance.now();
    // One sort per index: as much memory for it as a bench machine spares.
    await client.query(`set maintenance_work_mem = '1GB'`);
    // pg_get_indexdef names a partitioned table's own index `on only` (made on no partition): made here on
    // the parent and every partition, as the migrations made it.
    for (const index of indexes) await client.query(index.definition.replace(/ ON ONLY /, ' ON '));
    if (indexes.length > 0) console.log(`${indexes.length} indexes created after the load: ${elapsed(started)} s`);
    await client.end();
  };
  return { write, finish };
}
