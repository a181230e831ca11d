/**
 * PostgreSQL: the upgrade to monthly partitions (migration 0032) and what they cost the log writer. A
 * database at 0031 takes `rows` logs of one day through the writer's insert (1,000 a batch: its rate
 * before), is migrated to 0032 (timed, ANALYZE included), then takes as many again (its rate after) —
 * both with the rollups of 0031 alone (the customer rollups of 0034 are not there yet).
 *
 *   npm run bench -- partition-upgrade [--rows 100000]
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { DEFAULT_LOG_MAX_BYTES } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { loadPriceTable } from '../src/logs/pricing/price-table.js';
import { insertLogs } from '../src/logs/repository.js';
import { LOG_ROLLUPS } from '../src/logs/rollups/rollup-kinds.js';
import { buildNewLog } from '../src/logs/write/new-log.js';
import { PG_URL } from './gatelog-process.js';
import { benchAuth } from './ingest-bench.js';
import { record } from './summary.js';

const DAY = 86_400_000;

async function withAdmin(statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

export async function runPartitionUpgradeBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { rows: { type: 'string', default: '100000' } } });
  const rows = Number(values.rows);
  const name = `gatelog_bench_partitions_${crypto.randomBytes(4).toString('hex')}`;
  await withAdmin(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const handle = connect({ kind: 'postgres', url: url.toString() });
  try {
    await migrateToLatest(handle.db, '0031_log_rollups');
    const org = { id: 'org-bench', name: 'bench' };
    await handle.db.insertInto('organizations').values({ id: org.id, name: org.name, created_at: 0 }).execute();
    const auth = benchAuth(org, 'key-bench');
    const prices = loadPriceTable(null);
    const now = Date.now();
    // Logs/s of the writer's inserter, the batches built beforehand.
    const seed = async (): Promise<number> => {
      const batches = [];
      for (let at = 0; at < rows; at += 1000) {
        const batch = Array.from({ length: Math.min(1000, rows - at) }, (_, i) =>
          buildNewLog(
            {
              log_method: 'logging_api',
              model: `model-${i % 5}`,
              customer_identifier: `customer-${i % 300}`,
              metadata: { feature: `f${i % 20}` },
              input: `question number ${at + i}`,
              output: 'an answer',
              timestamp: now - (((at + i) * 37_000) % DAY),
            } as never,
            auth,
            prices,
            DEFAULT_LOG_MAX_BYTES,
          ),
        );
        batches.push(batch);
      }
      const started = performance.now();
      for (const batch of batches)
        await handle.db.transaction().execute((trx) => insertLogs(trx, batch, [LOG_ROLLUPS]));
      return rows / ((performance.now() - started) / 1000);
    };
    const before = await seed();
    const started = performance.now();
    await migrateToLatest(handle.db, '0032_log_partitions');
    const migrateS = (performance.now() - started) / 1000;
    const after = await seed();
    record('partition-upgrade', 'postgres', 'migration 0032', migrateS, 's');
    console.log(`
the upgrade to monthly partitions (postgres), ${rows.toLocaleString('en')} logs:
| writer logs/s before | migration 0032 (with ANALYZE) | writer logs/s after |
|---|---|---|
| ${before.toFixed(0)} | ${migrateS.toFixed(1)} s | ${after.toFixed(0)} (${((after / before) * 100).toFixed(0)} %) |`);
  } finally {
    await handle.close();
    await withAdmin(`drop database if exists ${name} with (force)`);
  }
}
