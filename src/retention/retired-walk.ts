/**
 * The walk through a retired month's logs (month-retirement.ts): batch by batch, what hung off them
 * elsewhere — scores, search text, unique_ids, none of them read without its log — is deleted, and the
 * table dropped once walked; the month's retired side tables are dropped before it. Where the walk got
 * to is kept in log_month_retirements by the very statement that deletes a batch, so a walk cut short
 * (the run's budget, a restart, another node taking the next run) resumes after the last batch done and
 * counts each retired log once in `deleted_logs`.
 */
import { type Kysely, sql } from 'kysely';
import { monthOfPartition } from '../db/log-partitions.js';
import type { Database } from '../db/schema.js';
import { retiredSideTables, retiredTables, type RetirementTuning } from './month-retirement.js';

/**
 * Walks the retired months' logs while `inBudget` and the tuning's batches per run last, `inBatches`
 * running the batches while its first argument answers true (and resting between them). Answers how many
 * retired logs it went through and whether none is left.
 */
export async function walkRetiredMonths(
  db: Kysely<Database>,
  inBudget: () => boolean,
  inBatches: (within: () => boolean, work: () => Promise<boolean>) => Promise<boolean>,
  tuning: RetirementTuning,
): Promise<{ logs: number; done: boolean }> {
  let logs = 0;
  let batches = 0;
  const within = () => inBudget() && batches < tuning.walkBatchesPerRun;
  const cursors = new Map(
    (
      await sql<{ month: string; walked_to: string }>`select month, walked_to from log_month_retirements
        where walked_to is not null`.execute(db)
    ).rows.map((r) => [Number(r.month), Number(r.walked_to)]),
  );
  // The month's other partitions first: nothing reads them, and their drop deletes gigabytes of files
  // at its commit, which here holds no lock a write waits for (month-retirement.ts).
  for (const name of await retiredSideTables(db)) {
    if (!within()) return { logs, done: false };
    await sql`drop table if exists ${sql.id(name)}`.execute(db);
  }
  for (const name of await retiredTables(db)) {
    const month = monthOfPartition(name);
    if (month === null) continue;
    // A table retired by a version before the walk was kept: walked from its start.
    let after = cursors.get(month) ?? Number.MIN_SAFE_INTEGER;
    if (!within()) return { logs, done: false };
    const walked = await inBatches(within, async () => {
      batches += 1;
      const { rows } = await sql<{ n: number; last: string | null }>`
        with gone as (select id, unique_id from ${sql.id(name)} where id > ${after} order by id
            limit ${tuning.walkBatch}),
          s as (delete from scores where log_id in (select id from gone)),
          q as (delete from log_search where log_id in (select id from gone)),
          u as (delete from log_unique_ids where unique_id in (select unique_id from gone)),
          w as (insert into log_month_retirements (month, walked_to) select ${month}::bigint, max(id) from gone
            having count(*) > 0 on conflict (month) do update set walked_to = excluded.walked_to)
        select count(*)::int as n, max(id) as last from gone`.execute(db);
      const { n, last } = rows[0];
      logs += n;
      if (last !== null) after = Number(last);
      if (n < tuning.walkBatch) {
        await db.transaction().execute(async (trx) => {
          await sql`drop table ${sql.id(name)}`.execute(trx);
          await sql`delete from log_month_retirements where month = ${month}`.execute(trx);
        });
        return true;
      }
      return false;
    });
    if (!walked) return { logs, done: false };
  }
  return { logs, done: true };
}
