/**
 * The search indexer (docs/decisions.md "Search index"): fills `log_search` from the logs in id order,
 * in bounded batches, off the write path — a batch of logs is written without it, and it runs when the
 * log writer has been idle a moment (or, under a load that never pauses, one small batch a second, so that
 * the part of a search read without the index stays small). Each batch and the new watermark commit
 * together, so a crash loses nothing: the next run starts from the stored watermark.
 *
 * A batch is bounded by logs and by the characters of text it indexes (each field is read as a capped
 * prefix, search-text.ts): on SQLite its transaction holds the database's one write lock, and the log
 * writer must never wait long behind it — so SQLite reads the logs before it takes the lock, and the
 * transaction only writes (docs/decisions.md "Search: a capped prefix of each field").
 *
 * A batch the database refuses is retried row by row; a row it still refuses alone is set aside
 * (`search_set_aside`, counted in /health, searched directly) so that one log never stops indexing for
 * every organization. A failure of the database itself is retried with a growing pause, logged once
 * (docs/decisions.md "Search: a batch the database refuses").
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
import { isSqliteOutageCode, unavailableReason } from '../../db/unavailable.js';
import { oneOf } from '../../db/dialect.js';
import { countSetAside, readWatermark, searchSourceColumns, setAside, writeSearchRows } from './search-store.js';
import { type SearchSource, searchText } from './search-text.js';

export interface SearchIndexerOptions {
  /** Logs per batch (one transaction). */
  batchSize?: number;
  /**
   * Characters of search text per batch, at most (a batch holds at least one log). Default: 64 Ki on
   * SQLite, where the trigram index takes about 1–3 MB a second and the transaction holds the write lock
   * meanwhile (tens of ms); 1 Mi on PostgreSQL, whose writers never wait on it.
   */
  batchTextChars?: number;
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
  /** The longest pause between tries while the database fails. */
  maxBackoffMs?: number;
}

/** What the indexer needs of the log writer: whether it is busy. */
export interface WriterActivity {
  /** Milliseconds since the writer last took or wrote logs (0 while logs wait). */
  readonly idleMs: number;
}

/** What /health shows of the indexer. */
export interface SearchIndexStatus {
  /** 'retrying': its last batch failed (the database, not a log), and it tries again after a pause. */
  readonly state: 'ok' | 'retrying';
  /** Logs set aside: their text could not be indexed (searched directly). */
  readonly setAside: number;
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

/** Logs read per query at most (fewer once their texts show how many fit the batch). */
const PAGE_ROWS = 100;

/** How often the set-aside count is read again (another node may have set logs aside, retention removed some). */
const SET_ASIDE_REFRESH_MS = 60_000;

/** One log's text, as the batch will index it. */
interface Text {
  id: number;
  text: string;
}

/** What a batch did: how many logs it took, whether more were waiting past them, whether it ran at all. */
interface Batch {
  count: number;
  more: boolean;
  tried: boolean;
}

/** What a batch read: the texts, and whether it read every log up to its bound. */
interface Read {
  texts: Text[];
  complete: boolean;
}

/**
 * Whether an error is the database's state rather than the rows': unreachable, busy, out of space, a
 * statement cancelled by its timeout, a lock or serialization conflict. The batch is then retried as it
 * is, later; anything else is the rows', and they are tried one by one.
 */
function isTransient(err: unknown): boolean {
  if (unavailableReason(err) !== null) return true;
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  return isSqliteOutageCode(code) || ['57014', '40001', '40P01', '55P03'].includes(code);
}

const errorText = (err: unknown) => String((err as { message?: unknown } | null)?.message ?? err).slice(0, 2000);

export class SearchIndexer implements SearchIndexStatus {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private lastBatchAt = 0;
  /** Under constant writes: the size of the next batch, doubled while batches come back full (behind). */
  private busySize = 0;
  private behind = false;
  private barrier: Barrier | null = null;
  /**
   * On PostgreSQL: the highest bound known safe. It stays safe (every log up to it is visible or will
   * never be), so batches go on up to it without waiting for another barrier: a barrier a batch would cap
   * indexing at one batch a second, below what a busy node writes.
   */
  private safeBound = 0;
  private stopped = false;
  private readonly opts: Required<SearchIndexerOptions>;
  private readonly db: Kysely<Database>;
  private readonly dialect: DialectName;
  /** Failed tries in a row (0: the last batch worked). */
  failures = 0;
  private setAsideCount = 0;
  private setAsideReadAt = Number.NEGATIVE_INFINITY;
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
      batchTextChars: handle.dialect === 'sqlite' ? 64 * 1024 : 1024 * 1024,
      intervalMs: 250,
      idleMs: 200,
      busyIntervalMs: 1000,
      busyBatchSize: 200,
      maxBackoffMs: 60_000,
      ...options,
    };
  }

  get state(): 'ok' | 'retrying' {
    return this.failures > 0 ? 'retrying' : 'ok';
  }

  /** Logs set aside, as last read (at start, after setting one aside, and every minute). */
  get setAside(): number {
    return this.setAsideCount;
  }

  /** Runs in the background until stop(). */
  start(): void {
    this.stopped = false;
    this.schedule(0);
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

  /** Reads the set-aside count again. */
  async refreshSetAside(): Promise<number> {
    this.setAsideCount = await countSetAside(this.db);
    this.setAsideReadAt = performance.now();
    return this.setAsideCount;
  }

  private schedule(delayMs = this.opts.intervalMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick()
        .catch((err) => this.failed(err))
        .finally(() => {
          this.running = null;
          // While the database fails: 2, 4, 8 … intervals, up to maxBackoffMs.
          const backoff = this.opts.intervalMs * 2 ** Math.min(this.failures, 16);
          this.schedule(this.failures > 0 ? Math.min(backoff, this.opts.maxBackoffMs) : this.opts.intervalMs);
        });
    }, delayMs);
    this.timer.unref?.();
  }

  /** The first failure of a run of them is logged (with its error); the rest only counted. */
  private failed(err: unknown): void {
    this.failures++;
    if (this.failures === 1) this.log?.warn({ err }, 'search indexing failed; retrying with a growing pause');
  }

  private recovered(): void {
    if (this.failures === 0) return;
    this.log?.info({ failed_tries: this.failures }, 'search indexing works again');
    this.failures = 0;
  }

  /** Batches while the writer stays idle; one batch when it is busy and the last one is long enough ago. */
  private async tick(): Promise<void> {
    if (performance.now() - this.setAsideReadAt >= SET_ASIDE_REFRESH_MS) await this.refreshSetAside();
    const idle = () => this.writer === null || this.writer.idleMs >= this.opts.idleMs;
    if (!idle()) {
      // A batch a second keeps up with ordinary traffic; one that comes back full means the writes outrun
      // it, so batches grow (to a full one) and come every tick until they do not: searches read the
      // logs above the watermark row by row, and that tail must stay short.
      if (!this.behind && performance.now() - this.lastBatchAt < this.opts.busyIntervalMs) return;
      const size = this.busySize || this.opts.busyBatchSize;
      const { more } = await this.batch(size);
      this.behind = more;
      this.busySize = this.behind ? Math.min(size * 2, this.opts.batchSize) : this.opts.busyBatchSize;
      return;
    }
    while (!this.stopped && idle() && (await this.batch(this.opts.batchSize)).count > 0) {
      // Let the event loop serve (and the writer take the lock) between batches.
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
    return (await this.batch(size)).count;
  }

  /** One bounded batch. */
  private async batch(size: number): Promise<Batch> {
    this.lastBatchAt = performance.now();
    const done = this.dialect === 'postgres' ? await this.postgresBatch(size) : await this.sqliteBatch(size);
    this.indexed += done.count;
    // A round that did not reach the database's tables (another node's turn, no safe bound yet) says
    // nothing of whether indexing works.
    if (done.tried) this.recovered();
    return done;
  }

  /**
   * PostgreSQL: one transaction. The rows are read FOR SHARE and held until their text is in the index,
   * so a deletion or content clearing (retention) runs after, and takes the new index rows with it.
   */
  private postgresBatch(size: number): Promise<Batch> {
    return this.db.transaction().execute(async (trx) => {
      const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${PG_LOCK_KEY}) as ok`.execute(trx);
      if (!lock.rows[0]?.ok) return { count: 0, more: false, tried: false };
      const bound = await this.postgresBound(trx);
      if (bound === 0) return { count: 0, more: false, tried: false };
      const watermark = await readWatermark(trx);
      const read = await this.read(trx, watermark, bound, size);
      const last = read.texts.at(-1)?.id ?? watermark;
      // A complete read took every log up to the bound: the watermark goes to it.
      const next = read.complete ? Math.max(last, bound) : last;
      if (next <= watermark) return { count: 0, more: false, tried: true };
      await this.store(trx, read.texts);
      await trx.updateTable('search_watermark').set({ log_id: next }).where('name', '=', 'logs').execute();
      return { count: read.texts.length, more: !read.complete, tried: true };
    });
  }

  /**
   * SQLite: the logs are read first, outside any transaction (WAL: the writer goes on meanwhile), then a
   * short transaction writes their texts and the watermark. The bulk connection is held throughout, so
   * retention (the only writer that clears a log's text, on the same connection) cannot run in between;
   * a log its route deleted meanwhile is left out.
   */
  private sqliteBatch(size: number): Promise<Batch> {
    return this.db.connection().execute(async (conn) => {
      const watermark = await readWatermark(conn);
      const read = await this.read(conn, watermark, Number.MAX_SAFE_INTEGER, size);
      if (read.texts.length === 0) return { count: 0, more: false, tried: true };
      const next = read.texts[read.texts.length - 1].id;
      await conn.transaction().execute(async (trx) => {
        const ids = read.texts.map((t) => t.id);
        const live = new Set(
          (
            await trx
              .selectFrom('logs')
              .select('id')
              .where(oneOf('sqlite', sql.ref('id'), ids))
              .execute()
          ).map((r) => Number(r.id)),
        );
        await this.store(
          trx,
          read.texts.filter((t) => live.has(t.id)),
        );
        await trx.updateTable('search_watermark').set({ log_id: next }).where('name', '=', 'logs').execute();
      });
      return { count: read.texts.length, more: !read.complete, tried: true };
    });
  }

  /**
   * The texts of the logs after `after` up to `bound`, in id order, until `size` logs or the batch's
   * characters; `complete` when every log up to the bound was read.
   */
  private async read(db: Kysely<Database>, after: number, bound: number, size: number): Promise<Read> {
    const texts: Text[] = [];
    let chars = 0;
    let pageRows = Math.min(size, PAGE_ROWS);
    for (;;) {
      const rows = await db
        .selectFrom('logs')
        .select('id')
        .select(searchSourceColumns())
        .where('id', '>', after)
        .where('id', '<=', bound)
        .orderBy('id')
        .limit(pageRows)
        .$if(this.dialect === 'postgres', (q) => q.forShare())
        .execute();
      for (const row of rows) {
        const text = searchText(row as SearchSource);
        texts.push({ id: Number(row.id), text });
        chars += text.length;
        after = Number(row.id);
        if (texts.length >= size || chars >= this.opts.batchTextChars) return { texts, complete: false };
      }
      if (rows.length < pageRows) return { texts, complete: true };
      // The next page: as many logs as the texts so far say will fit (a large log's fields are read whole
      // by SQLite before their prefix is taken, so no more of them than needed).
      const perLog = Math.max(1, chars / texts.length);
      pageRows = Math.max(
        1,
        Math.min(PAGE_ROWS, size - texts.length, Math.ceil((this.opts.batchTextChars - chars) / perLog)),
      );
    }
  }

  /**
   * Writes the texts in the caller's transaction: all at once, or — when the database refuses that —
   * one by one, each in a savepoint, setting aside the logs whose row it refuses alone.
   */
  private async store(trx: Kysely<Database>, texts: readonly Text[]): Promise<void> {
    const rows = texts.filter((t) => t.text !== '');
    if (rows.length === 0) return;
    try {
      await this.inSavepoint(trx, () => writeSearchRows(trx, this.dialect, rows));
      return;
    } catch (err) {
      if (isTransient(err)) throw err;
    }
    const refused: { id: number; error: string }[] = [];
    for (const row of rows) {
      try {
        await this.inSavepoint(trx, () => writeSearchRows(trx, this.dialect, [row]));
      } catch (err) {
        // The row's own text is at fault only if the same row with no text is taken: a missing or broken
        // index table refuses every row, and must not have them all set aside.
        if (isTransient(err) || !(await this.takesEmptyRow(trx, row.id))) throw err;
        refused.push({ id: row.id, error: errorText(err) });
      }
    }
    if (refused.length === 0) return;
    await setAside(trx, refused);
    this.setAsideCount += refused.length;
    this.log?.warn(
      { log_ids: refused.map((r) => r.id), error: refused[0].error },
      'the database refused the search text of these logs: set aside (searched directly, counted in /health)',
    );
  }

  /** Whether the index takes this log's row with an empty text (tried, then undone). */
  private async takesEmptyRow(trx: Kysely<Database>, id: number): Promise<boolean> {
    await sql`savepoint search_probe`.execute(trx);
    try {
      await writeSearchRows(trx, this.dialect, [{ id, text: '' }]);
      return true;
    } catch {
      return false;
    } finally {
      await sql`rollback to savepoint search_probe`.execute(trx);
      await sql`release savepoint search_probe`.execute(trx);
    }
  }

  private async inSavepoint(trx: Kysely<Database>, work: () => Promise<void>): Promise<void> {
    await sql`savepoint search_rows`.execute(trx);
    try {
      await work();
    } catch (err) {
      await sql`rollback to savepoint search_rows`.execute(trx);
      await sql`release savepoint search_rows`.execute(trx);
      throw err;
    }
    await sql`release savepoint search_rows`.execute(trx);
  }

  /**
   * The highest id every log up to which is visible: a bound read earlier once the transactions running
   * then have all ended (kept until a higher one is); 0 when there is none yet. Reads the next bound
   * meanwhile.
   */
  private async postgresBound(trx: Kysely<Database>): Promise<number> {
    const now = await sql<{ max_id: string | number | null; xmin: string; running: string[] }>`
      select (select max(id) from logs) as max_id,
        pg_snapshot_xmin(pg_current_snapshot())::text as xmin,
        array(select x::text from pg_snapshot_xip(pg_current_snapshot()) as x) as running`.execute(trx);
    const row = now.rows[0];
    const xmin = BigInt(row.xmin);
    const held = this.barrier;
    if (held && performance.now() - held.at >= BARRIER_DELAY_MS && held.running.every((x) => BigInt(x) < xmin)) {
      this.safeBound = Math.max(this.safeBound, held.maxId);
      this.barrier = null;
    }
    if (!this.barrier) this.barrier = { maxId: Number(row.max_id ?? 0), running: row.running, at: performance.now() };
    return this.safeBound;
  }
}
