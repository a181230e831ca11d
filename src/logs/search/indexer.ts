/**
 * The search indexer (docs/decisions.md "Search index"): fills `log_search` from the logs in id order,
 * in bounded batches, off the write path — a batch of logs is written without it, and it runs when the
 * log writer has been idle a moment (or, under a load that never pauses, one small batch a second, so that
 * the part of a search read without the index stays small). Each batch and the new watermark commit
 * together, so a crash loses nothing: the next run starts from the stored watermark.
 *
 * PostgreSQL: several nodes may run it; a transaction-scoped advisory lock lets one index at a time (the
 * others skip that round). Ids come from a sequence and are taken before their transaction commits, so
 * the highest id visible now may sit above a log still being written: the indexer only goes up to a
 * bound it saw earlier, once every transaction that was running then has ended (their logs are visible
 * or gone) — a log below the watermark is never one the index missed.
 */
import { type Kysely, sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { DbHandle, DialectName } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { readWatermark, writeSearchRows } from './search-store.js';
import { SEARCH_COLUMNS, type SearchSource, searchText } from './search-text.js';

export interface SearchIndexerOptions {
  /** Logs per batch (one transaction). */
  batchSize?: number;
  /** How often it looks for work. */
  intervalMs?: number;
  /** How long the writer must have been idle before a batch runs. */
  idleMs?: number;
  /** Under constant writes, at most one batch this often… */
  busyIntervalMs?: number;
  /**
   * …of this many logs: on SQLite a batch holds the database's one write lock, so under load it stays
   * small (about 200 logs: tens of ms a second) and the writer keeps nearly all of it.
   */
  busyBatchSize?: number;
}

/** What the indexer needs of the log writer: whether it is busy. */
export interface WriterActivity {
  /** Milliseconds since the writer last took or wrote logs (0 while logs wait). */
  readonly idleMs: number;
}

/** The advisory lock key of the indexer on PostgreSQL ("gl-search" as a number). */
const PG_LOCK_KEY = 0x676c_7365_6172;

/** On PostgreSQL: a log id bound and the transactions running when it was read. */
interface Barrier {
  maxId: number;
  running: string[];
  at: number;
}

/** How long after reading a bound it is used at the earliest: a sequence value is taken a moment before its transaction has an id. */
const BARRIER_DELAY_MS = 1000;

export class SearchIndexer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private lastBatchAt = 0;
  /** Under constant writes: the size of the next batch, doubled while batches come back full (behind). */
  private busySize = 0;
  private behind = false;
  private barrier: Barrier | null = null;
  private stopped = false;
  private readonly opts: Required<SearchIndexerOptions>;
  private readonly db: Kysely<Database>;
  private readonly dialect: DialectName;
  /** Logs indexed since start (/metrics could show it; tests read it). */
  indexed = 0;

  constructor(
    handle: DbHandle,
    private readonly writer: WriterActivity | null,
    private readonly log: FastifyBaseLogger | null = null,
    options: SearchIndexerOptions = {},
  ) {
    // SQLite: the bulk thread, so a batch never holds up the event loop's own connection.
    this.db = handle.bulk;
    this.dialect = handle.dialect;
    this.opts = {
      batchSize: 1000,
      intervalMs: 250,
      idleMs: 200,
      busyIntervalMs: 1000,
      busyBatchSize: 200,
      ...options,
    };
  }

  /** Runs in the background until stop(). */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** Indexes until every log written so far is indexed (tests, `gatelog` commands). Returns the watermark. */
  async catchUp(): Promise<number> {
    await this.running?.catch(() => {});
    for (;;) {
      const n = await this.indexBatch();
      if (n === 0 && (this.dialect === 'sqlite' || (await this.caughtUp()))) return readWatermark(this.db);
      if (n === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick()
        .catch((err) => this.log?.warn({ err }, 'search indexing failed; retrying'))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.opts.intervalMs);
    this.timer.unref?.();
  }

  /** Batches while the writer stays idle; one batch when it is busy and the last one is long enough ago. */
  private async tick(): Promise<void> {
    const idle = () => this.writer === null || this.writer.idleMs >= this.opts.idleMs;
    if (!idle()) {
      // A batch a second keeps up with ordinary traffic; one that comes back full means the writes outrun
      // it, so batches grow (to a full one) and come every tick until they do not: searches read the
      // logs above the watermark row by row, and that tail must stay short.
      if (!this.behind && performance.now() - this.lastBatchAt < this.opts.busyIntervalMs) return;
      const size = this.busySize || this.opts.busyBatchSize;
      const n = await this.indexBatch(size);
      this.behind = n === size;
      this.busySize = this.behind ? Math.min(size * 2, this.opts.batchSize) : this.opts.busyBatchSize;
      return;
    }
    while (!this.stopped && idle() && (await this.indexBatch()) > 0) {
      // Let the event loop serve between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** On PostgreSQL: whether every log visible now is indexed. */
  private async caughtUp(): Promise<boolean> {
    const max = await this.db
      .selectFrom('logs')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(max?.id ?? 0) <= (await readWatermark(this.db));
  }

  /** One bounded batch; returns the number of logs indexed (0 on PostgreSQL also while no bound is safe yet). */
  async indexBatch(size = this.opts.batchSize): Promise<number> {
    this.lastBatchAt = performance.now();
    const n = await this.db.transaction().execute(async (trx) => {
      let bound = Number.MAX_SAFE_INTEGER;
      if (this.dialect === 'postgres') {
        const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${PG_LOCK_KEY}) as ok`.execute(trx);
        if (!lock.rows[0]?.ok) return 0;
        bound = await this.postgresBound(trx);
        if (bound === 0) return 0;
      }
      const watermark = await readWatermark(trx);
      const rows = await trx
        .selectFrom('logs')
        .select(['id', ...SEARCH_COLUMNS])
        .where('id', '>', watermark)
        .where('id', '<=', bound)
        .orderBy('id')
        .limit(size)
        // PostgreSQL: the rows are held until their text is in the index, so a deletion or content
        // clearing (retention) runs after, and takes the new index rows with it, never before them.
        .$if(this.dialect === 'postgres', (q) => q.forShare())
        .execute();
      const full = rows.length === size;
      const last = rows.length > 0 ? Number(rows[rows.length - 1].id) : watermark;
      // A short batch read every log up to the bound (PostgreSQL) or every log there is (SQLite).
      const next = full || bound === Number.MAX_SAFE_INTEGER ? last : Math.max(last, bound);
      if (next <= watermark) return 0;
      const texts = rows
        .map((r) => ({ id: Number(r.id), text: searchText(r as SearchSource) }))
        .filter((r) => r.text !== '');
      await writeSearchRows(trx, this.dialect, texts);
      await trx.updateTable('search_watermark').set({ log_id: next }).where('name', '=', 'logs').execute();
      return rows.length;
    });
    this.indexed += n;
    return n;
  }

  /**
   * The highest id every log up to which is visible: a bound read earlier once the transactions running
   * then have all ended; 0 when there is none yet. Reads the next bound meanwhile.
   */
  private async postgresBound(trx: Kysely<Database>): Promise<number> {
    const now = await sql<{ max_id: string | number | null; xmin: string; running: string[] }>`
      select (select max(id) from logs) as max_id,
        pg_snapshot_xmin(pg_current_snapshot())::text as xmin,
        array(select x::text from pg_snapshot_xip(pg_current_snapshot()) as x) as running`.execute(trx);
    const row = now.rows[0];
    const xmin = BigInt(row.xmin);
    let bound = 0;
    const held = this.barrier;
    if (held && performance.now() - held.at >= BARRIER_DELAY_MS && held.running.every((x) => BigInt(x) < xmin)) {
      bound = held.maxId;
      this.barrier = null;
    }
    if (!this.barrier) this.barrier = { maxId: Number(row.max_id ?? 0), running: row.running, at: performance.now() };
    return bound;
  }
}
