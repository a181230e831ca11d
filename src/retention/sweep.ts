/**
 * The retention sweep (docs/api.md "Retention"): every GATELOG_RETENTION_INTERVAL_S it deletes logs past
 * their organization's retention, clears the content of logs past its content retention, and removes
 * expired cache entries and dead letters past the retention. Small batches, each its own transaction, on
 * the bulk connection (SQLite: a thread of its own), under a time budget per run: requests never wait on
 * it, and what a run leaves is taken up by the next, which then comes soon. In a PostgreSQL deployment
 * one node sweeps at a time (a session advisory lock); the others skip that round. On PostgreSQL a month
 * past every organization's retention is first detached whole (month-retirement.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { removeExpired } from '../cache/cache-store.js';
import type { DbHandle } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { DeadLetterStore } from '../logs/write/dead-letters.js';
import { withDefaults } from '../org-settings/settings.js';
import { type ContentCursor, clearContentBefore, deleteLogsBefore, type TimeRange } from './log-removal.js';
import { type RetentionDefaults, retentionCutoffs } from './policy.js';
import {
  type MonthWay,
  type OrganizationCutoff,
  RETIREMENT,
  type RetirementTuning,
  retireExpiredMonths,
} from './month-retirement.js';
import { walkRetiredMonths } from './retired-walk.js';
import { createMonthsAhead } from '../db/log-partitions.js';

/** Logs per transaction: a writer waits at most one such batch. */
const BATCH = 500;
/**
 * After each batch the sweep rests as long as the batch took (times this ratio), so it takes at most half
 * of a core's time and of the write lock: on a busy node the requests' own work and the log writer get
 * the other half. Measured: without the rest, 1M expired logs on SQLite moved proxied p99 by 3.4 ms.
 */
const REST_RATIO = 1;
/** The longest one run works; the rest waits for the next run. */
const RUN_BUDGET_MS = 5_000;
/** How soon a run that ran out of budget is followed by the next. */
const CATCH_UP_DELAY_MS = 1_000;
/** The first run after start: soon, so a node that restarts often still sweeps. */
const FIRST_RUN_MAX_DELAY_MS = 60_000;
/** Pages a SQLite file gives back after each batch of deletions (4 KiB each). */
const VACUUM_PAGES = 2_048;
/**
 * How often the content walk starts again from the oldest log: a log written with a timestamp the walk
 * had passed (the logging API takes any timestamp) is cleared within a day. The walk reads only the
 * (organization, timestamp, id) index, so going over the cleared logs again costs little.
 */
const CONTENT_WALK_RESTART_MS = 86_400_000;
/** The advisory-lock key of the sweep in PostgreSQL ('gatelog retention' hashed, fixed here). */
const PG_LOCK_KEY = 7_402_118_305;

export interface SweepReport {
  started_at: string;
  duration_ms: number;
  deleted_logs: number;
  cleared_logs: number;
  cache_entries: number;
  dead_letters: number;
  /** PostgreSQL: the months past every retention this run dealt with, and how (month-retirement.ts). */
  months: { month: string; way: MonthWay }[];
  /** false: the time budget ran out first; the next run goes on. */
  complete: boolean;
  /** Why the run stopped early, when it failed. */
  error: string | null;
}

export interface RetentionSweepOptions extends RetentionDefaults {
  intervalMs: number;
  /** The month retirement's tries and batches (tests); RETIREMENT otherwise. */
  retirement?: Partial<RetirementTuning>;
}

export class RetentionSweep {
  /** The last run on this node (null: none yet). */
  lastRun: SweepReport | null = null;
  /** Totals since start, for /metrics. */
  readonly totals = { deleted_logs: 0, cleared_logs: 0, runs: 0, failures: 0 };
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepReport | null> | null = null;
  private stopping = false;
  /** Per organization, where the content walk got to (see clearContentBefore). */
  private readonly contentCursors = new Map<string, ContentCursor | null>();
  private contentWalkStarted = 0;
  private readonly retirement: RetirementTuning;

  constructor(
    private readonly db: DbHandle,
    private readonly options: RetentionSweepOptions,
    private readonly logger: FastifyBaseLogger,
    private readonly deadLetters: DeadLetterStore | null,
  ) {
    this.retirement = { ...RETIREMENT, ...options.retirement };
  }

  start(): void {
    this.schedule(Math.min(this.options.intervalMs, FIRST_RUN_MAX_DELAY_MS));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // A run that fails outside its own handling (the database unreachable for the lock) is logged and
      // the next one comes as usual: a background loop never takes the process down, nor stops.
      let catchUp = false;
      void this.run()
        .then((report) => {
          catchUp = report !== null && !report.complete;
        })
        .catch((err: unknown) => {
          this.totals.failures += 1;
          this.logger.error({ err }, 'the retention sweep failed; the next run tries again');
        })
        .finally(() => this.schedule(catchUp ? CATCH_UP_DELAY_MS : this.options.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  /** One run now (null: another node is sweeping, or one is already running here). */
  async run(now = Date.now()): Promise<SweepReport | null> {
    if (this.running) return this.running;
    this.running = this.sweep(now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async sweep(now: number): Promise<SweepReport | null> {
    if (this.db.dialect === 'postgres') {
      // A session lock: held on one pooled connection for the whole run, every batch on that connection.
      return this.db.bulk.connection().execute(async (conn) => {
        const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${PG_LOCK_KEY}) as locked`.execute(
          conn,
        );
        if (!rows[0]?.locked) return null;
        try {
          return await this.sweepWith(conn, now);
        } finally {
          // A connection that broke took its session lock with it; only a live one is unlocked.
          await sql`select pg_advisory_unlock(${PG_LOCK_KEY})`.execute(conn).catch(() => undefined);
        }
      });
    }
    return this.sweepWith(this.db.bulk, now);
  }

  private async sweepWith(db: Kysely<Database>, now: number): Promise<SweepReport> {
    const started = Date.now();
    const report: SweepReport = {
      started_at: new Date(started).toISOString(),
      duration_ms: 0,
      deleted_logs: 0,
      cleared_logs: 0,
      cache_entries: 0,
      dead_letters: 0,
      months: [],
      complete: false,
      error: null,
    };
    const inBudget = () => !this.stopping && Date.now() - started < RUN_BUDGET_MS;
    try {
      report.cache_entries = await removeExpired(db, now, inBudget);
      const orgs = await db
        .selectFrom('organizations')
        .leftJoin('organization_settings', 'organization_settings.organization_id', 'organizations.id')
        .select(['organizations.id', 'organization_settings.settings'])
        .execute();
      if (now - this.contentWalkStarted >= CONTENT_WALK_RESTART_MS) {
        this.contentCursors.clear();
        this.contentWalkStarted = now;
      }
      const cutoffs = orgs.map((org) => ({
        organizationId: org.id,
        ...retentionCutoffs(this.options, withDefaults(org.settings ? JSON.parse(org.settings) : {}), now),
      }));
      let complete = true;
      let waiting: TimeRange[] = [];
      if (this.db.dialect === 'postgres') {
        ({ complete, waiting } = await this.retireMonths(db, cutoffs, report, now, inBudget));
      }
      for (const { organizationId, deleteBefore, clearBefore } of cutoffs) {
        const organization: OrganizationSweep = { db, organizationId, report, inBudget };
        if (deleteBefore !== null) {
          const letters = await db
            .deleteFrom('dead_letters')
            .where('organization_id', '=', organizationId)
            .where('created_at', '<', deleteBefore)
            .executeTakeFirst();
          report.dead_letters += Number(letters.numDeletedRows);
          complete = (await this.deleteOld(organization, deleteBefore, waiting)) && complete;
        }
        if (clearBefore !== null) complete = (await this.clearOld(organization, clearBefore)) && complete;
        else this.contentCursors.delete(organizationId);
        if (!inBudget()) break;
      }
      report.complete = complete && inBudget();
      if (report.dead_letters > 0) this.deadLetters?.forget(report.dead_letters);
    } catch (err) {
      report.error = err instanceof Error ? err.message : String(err);
      this.totals.failures += 1;
      this.logger.error({ err }, 'the retention sweep failed; the next run tries again');
    }
    report.duration_ms = Date.now() - started;
    this.totals.runs += 1;
    this.totals.deleted_logs += report.deleted_logs;
    this.totals.cleared_logs += report.cleared_logs;
    this.lastRun = report;
    if (report.deleted_logs + report.cleared_logs > 0) this.logger.info({ retention: report }, 'retention sweep');
    return report;
  }

  /**
   * PostgreSQL: the months ahead get their partitions, the months past every organization's retention
   * are detached whole and their logs' scores and search text deleted (month-retirement.ts). Answers
   * whether no retired month is left to walk, and the months whose logs wait for their detachment (the
   * deletion by rows leaves them alone).
   */
  private async retireMonths(
    db: Kysely<Database>,
    cutoffs: OrganizationCutoff[],
    report: SweepReport,
    now: number,
    inBudget: () => boolean,
  ): Promise<{ complete: boolean; waiting: TimeRange[] }> {
    await createMonthsAhead(db, now);
    const outcomes = await retireExpiredMonths(db, cutoffs, now, this.retirement);
    report.months = outcomes.map((m) => ({ month: new Date(m.lo).toISOString().slice(0, 7), way: m.way }));
    // Said when a detachment was tried (not at every run between two tries).
    if (outcomes.some((m) => m.tried)) {
      const busy = outcomes.some((m) => m.tried && m.way !== 'detached');
      this.logger[busy ? 'warn' : 'info'](
        { months: report.months },
        busy
          ? `retention could not detach months past every retention (busy): their logs go by rows after ${this.retirement.detachTries} tries`
          : "retention detached months of logs past every organization's retention",
      );
    }
    const walked = await walkRetiredMonths(db, inBudget, inBatches, this.retirement);
    report.deleted_logs += walked.logs;
    return { complete: walked.done, waiting: outcomes.filter((m) => m.way === 'busy') };
  }

  /**
   * Deletes the organization's logs older than `before`, batch by batch, but those in months `waiting`
   * to be detached whole; true when none is left.
   */
  private async deleteOld(organization: OrganizationSweep, before: number, waiting: TimeRange[]): Promise<boolean> {
    const { db, organizationId, report, inBudget } = organization;
    return inBatches(inBudget, async () => {
      const { deleted, more } = await deleteLogsBefore(db, organizationId, before, BATCH, waiting);
      report.deleted_logs += deleted;
      if (deleted > 0 && this.db.dialect === 'sqlite') {
        await sql`pragma incremental_vacuum(${sql.lit(VACUUM_PAGES)})`.execute(db);
      }
      return !more;
    });
  }

  /** Clears the content of the organization's logs older than `before`; true when the walk reached it. */
  private async clearOld(organization: OrganizationSweep, before: number): Promise<boolean> {
    const { db, organizationId, report, inBudget } = organization;
    return inBatches(inBudget, async () => {
      const after = this.contentCursors.get(organizationId) ?? null;
      const { cleared, cursor, done } = await clearContentBefore(db, organizationId, before, after, BATCH);
      report.cleared_logs += cleared;
      this.contentCursors.set(organizationId, cursor);
      return done;
    });
  }
}

/** One organization's part of a run: where, what it reports to, and whether the run's budget lasts. */
interface OrganizationSweep {
  db: Kysely<Database>;
  organizationId: string;
  report: SweepReport;
  inBudget: () => boolean;
}

/** Runs `batch` while the budget lasts, resting after each; true once a batch answers it was the last. */
async function inBatches(inBudget: () => boolean, batch: () => Promise<boolean>): Promise<boolean> {
  while (inBudget()) {
    const batchStarted = performance.now();
    if (await batch()) return true;
    await rest(batchStarted);
  }
  return false;
}

/** Waits as long as the batch begun at `batchStarted` took (REST_RATIO), leaving the others their share. */
function rest(batchStarted: number): Promise<void> {
  const ms = (performance.now() - batchStarted) * REST_RATIO;
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.round(ms))));
}
