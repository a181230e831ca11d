/**
 * The live tail of one node (docs/api.md "Live tail", docs/decisions.md "Live tail"): every tail
 * connection of the node shares one poll of the logs table by id.
 *
 * - The poll runs while a tail is open: soon after the node's log writer commits a batch (its logs
 *   arrive within milliseconds), and every `pollMs` otherwise (logs written by other nodes of a
 *   PostgreSQL deployment, within a second).
 * - Each poll makes the same few queries however many tails are open: the new ids (CommitWindow says
 *   which to deliver), one query answering every distinct filter of the open tails for those ids, and the
 *   list items of the logs some tail wants. Each event's text is made once and written to every tail
 *   that wants it.
 * - Nothing here waits for a reader (TailClient bounds each one's buffer), so the writer and the other
 *   tails never slow down for a slow one.
 * - Every second the credentials of the open tails are checked again (through the authenticator's
 *   one-second cache): a revoked key's tails end.
 */
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { DbHandle } from '../../db/connect.js';
import { withOwnQueryBudget } from '../../db/query-budget.js';
import { AppError } from '../../errors.js';
import { compileFilter } from '../../filters/compile.js';
import { planFilter } from '../list/filter-plan.js';
import { hasSearch, planSearchAmong } from '../search/search-plan.js';
import type { SearchSource } from '../search/search-text.js';
import { searchSourceColumns } from '../search/search-store.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { filteredLogs } from '../list/list.js';
import { fetchPageRows } from '../list/rows.js';
import { presentLog } from '../present.js';
import { scoresOfLogs } from '../repository.js';
import { CommitWindow } from './commit-window.js';
import { logEvent, TailClient, type TailSubscription } from './tail-client.js';

export interface TailHubOptions {
  /** Tails one node holds at once (GATELOG_TAIL_MAX_CLIENTS); beyond, 429. */
  maxClients: number;
  /** A comment is sent to every tail this often (default 15 s). */
  keepaliveMs?: number;
  /** How often the logs table is read when the node's own writer has not said anything (default 250 ms). */
  pollMs?: number;
  /** Logs sent after a Last-Event-ID at most (the newest of those missed). */
  backlog?: number;
  /** The longest one read of the tail may take (GATELOG_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
  /** Bytes a tail may have unsent before it is ended as too slow. */
  maxBufferBytes?: number;
  /** How often the tails' keys are checked again. */
  keyCheckMs?: number;
}

/**
 * Polls woken by the writer come at least this far apart: at a high rate each reads the logs of several
 * commits (fewer queries and socket writes per log), still well within the second a log may take.
 */
const MIN_POLL_GAP_MS = 250;

/**
 * Ids read per poll at most (four small columns each: on PostgreSQL the read covers the last
 * PG_SETTLE_MS of writes, already delivered or not), and logs delivered per poll at most: a burst larger
 * than these is delivered over several polls.
 */
const READ_LIMIT = 20_000;
const DELIVER_LIMIT = 2000;

/**
 * PostgreSQL commits concurrent writers' ids out of order: ids after a gap wait this long for it to
 * fill, and ids are re-read for late commits this long (commit-window.ts).
 */
const PG_GAP_WAIT_MS = 300;
const PG_SETTLE_MS = 2000;

/** Open tails with one scope and filter: the first one's subscription stands for all. */
interface Group {
  client: TailClient;
  candidates: number[];
  clients: TailClient[];
}

interface NewRow {
  id: number;
  organization_id: string;
  is_test: boolean;
  timestamp: number;
}

export class TailHub {
  private readonly clients = new Set<TailClient>();
  private readonly options: Required<TailHubOptions>;
  private window: CommitWindow | null = null;
  private starting: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private timerDueAt = 0;
  private lastPollAt = 0;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  private keepalive: NodeJS.Timeout | null = null;
  private keyCheck: NodeJS.Timeout | null = null;
  private closed = false;
  /** Reserved slots of tails still opening (their backlog is being read). */
  private opening = 0;

  constructor(
    private readonly db: DbHandle,
    /** Whether a credential is still valid: false ends its tails; a throw (database down) keeps them. */
    private readonly checkCredential: (credential: string) => Promise<boolean>,
    private readonly log: FastifyBaseLogger,
    options: TailHubOptions,
  ) {
    this.options = {
      keepaliveMs: 15_000,
      pollMs: 250,
      backlog: 1000,
      maxBufferBytes: 8 * 1024 * 1024,
      keyCheckMs: 1000,
      queryTimeoutMs: 30_000,
      ...options,
    };
  }

  /** Runs reads with a query budget of their own (GATELOG_QUERY_TIMEOUT_MS), never a request's. */
  private budgeted<T>(work: () => Promise<T>): Promise<T> {
    return withOwnQueryBudget(this.options.queryTimeoutMs, work);
  }

  /** Tails open now. */
  get size(): number {
    return this.clients.size;
  }

  /** The node's writer committed logs: read them now rather than at the next poll. */
  readonly wake = (): void => {
    if (this.clients.size === 0 || this.closed) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.schedule(Math.max(0, this.lastPollAt + MIN_POLL_GAP_MS - performance.now()), true);
  };

  /**
   * Opens a tail: refused with a 429 when the node holds its maximum, with a 503 once it is closing.
   * Resolves once the tail is live; its backlog (after Last-Event-ID) follows in the stream.
   */
  async open(subscription: TailSubscription): Promise<TailClient> {
    if (this.closed) throw new AppError(503, 'shutting_down', 'The service is shutting down; retry shortly.');
    if (this.clients.size + this.opening >= this.options.maxClients) {
      throw new AppError(
        429,
        'too_many_tails',
        `This node already holds ${this.options.maxClients} live tails (GATELOG_TAIL_MAX_CLIENTS); close one or retry later.`,
      );
    }
    this.opening += 1;
    try {
      await this.start();
    } finally {
      this.opening -= 1;
    }
    if (this.closed) {
      // close() left the poll running for this opening tail: nothing else will stop it now.
      this.stop();
      throw new AppError(503, 'shutting_down', 'The service is shutting down; retry shortly.');
    }
    const { scope, filter } = subscription;
    const client = new TailClient(subscription, JSON.stringify([scope, filter]), this.options.maxBufferBytes);
    this.clients.add(client);
    client.onEnd = () => {
      this.clients.delete(client);
      if (this.clients.size === 0) this.stop();
    };
    client.comment('live tail open');
    if (subscription.afterId !== null) {
      // In the background: the tail is live (events held) while the backlog is read, so none is missed.
      this.budgeted(() => this.sendBacklog(client)).catch((err) => {
        // Too slow (a rare filter far back) or the database is down: the tail goes on live without it.
        this.log.warn({ err }, 'live tail: reading the backlog after Last-Event-ID failed; sending new logs only');
        client.caughtUp([]);
      });
    }
    return client;
  }

  /** Ends every tail at once (server shutdown): nothing waits for a reader. */
  close(): void {
    this.closed = true;
    for (const client of [...this.clients]) client.end('shutdown');
    this.stop();
  }

  /** The first tail: the cursor starts at the newest log, and the timers run while tails are open. */
  private start(): Promise<void> {
    if (this.window) return Promise.resolve();
    this.starting ??= (async () => {
      try {
        const row = await this.budgeted(() =>
          this.db.reader
            .selectFrom('logs')
            .select((eb) => eb.fn.max('id').as('id'))
            .executeTakeFirst(),
        );
        const inOrder = this.db.dialect === 'sqlite';
        this.window = new CommitWindow(Number(row?.id ?? 0), {
          gapWaitMs: inOrder ? 0 : PG_GAP_WAIT_MS,
          settleMs: inOrder ? 0 : PG_SETTLE_MS,
        });
        this.keepalive = setInterval(() => {
          for (const client of this.clients) client.comment('keepalive');
        }, this.options.keepaliveMs);
        this.keepalive.unref();
        this.keyCheck = setInterval(() => void this.checkCredentials(), this.options.keyCheckMs);
        this.keyCheck.unref();
        this.schedule(this.options.pollMs);
      } finally {
        this.starting = null;
      }
    })();
    return this.starting;
  }

  /** The last tail ended: no poll, no timers, and the next tail starts from the newest log again. */
  private stop(): void {
    if (this.clients.size > 0 || this.opening > 0) return;
    if (this.timer) clearTimeout(this.timer);
    if (this.keepalive) clearInterval(this.keepalive);
    if (this.keyCheck) clearInterval(this.keyCheck);
    this.timer = this.keepalive = this.keyCheck = null;
    this.window = null;
  }

  private schedule(delayMs: number, replace = false): void {
    if (this.closed || this.window === null) return;
    const due = performance.now() + delayMs;
    if (this.timer) {
      if (!replace || this.timerDueAt <= due) return;
      clearTimeout(this.timer);
    }
    this.timerDueAt = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.lastPollAt = performance.now();
      this.polling = this.budgeted(() => this.poll())
        .catch((err) => this.log.warn({ err }, 'live tail: reading new logs failed; retrying'))
        .finally(() => {
          this.polling = null;
          const again = this.pollAgain;
          this.pollAgain = false;
          this.schedule(again ? MIN_POLL_GAP_MS : this.options.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const window = this.window;
    if (!window || this.clients.size === 0) return;
    const rows = await this.db.reader
      .selectFrom('logs')
      .select(['id', 'organization_id', 'is_test', 'timestamp'])
      .where('id', '>', window.floor)
      .orderBy('id')
      .limit(READ_LIMIT)
      .execute();
    const byId = new Map<number, NewRow>();
    for (const r of rows) {
      const id = Number(r.id);
      byId.set(id, {
        id,
        organization_id: r.organization_id,
        is_test: Number(r.is_test) === 1,
        timestamp: Number(r.timestamp),
      });
    }
    const ids = window.take([...byId.keys()], performance.now(), DELIVER_LIMIT);
    if (ids.length > 0) {
      try {
        await this.deliver(ids.map((id) => byId.get(id)!));
      } catch (err) {
        // Not sent to anyone: the next poll takes them again.
        window.giveBack(ids);
        throw err;
      }
    }
    // A full read or delivery leaves more: read on soon.
    if (rows.length === READ_LIMIT || ids.length === DELIVER_LIMIT) this.pollAgain = true;
  }

  /** Sends each tail the new logs it wants, in id order. */
  private async deliver(rows: readonly NewRow[]): Promise<void> {
    // Tails with the same scope and filter (same groupKey) want the same logs: found once per group.
    const groups = new Map<string, Group>();
    for (const client of this.clients) {
      const group = groups.get(client.groupKey);
      if (group) {
        group.clients.push(client);
        continue;
      }
      const candidates: number[] = [];
      for (const r of rows) if (client.inScope(r.organization_id, r.is_test, r.timestamp)) candidates.push(r.id);
      if (candidates.length > 0) groups.set(client.groupKey, { client, candidates, clients: [client] });
    }
    const filtered = [...groups.values()].filter((g) => g.client.subscription.filter !== null);
    const matched = filtered.length > 0 ? await this.matchFilters(filtered) : new Map<Group, number[]>();
    const wanted = new Map<Group, number[]>();
    for (const group of groups.values()) {
      const ids = group.client.subscription.filter === null ? group.candidates : matched.get(group);
      if (ids && ids.length > 0) wanted.set(group, ids);
    }
    const all = [...new Set([...wanted.values()].flat())].sort((a, b) => a - b);
    if (all.length === 0) return;
    const chunks = await this.events(all);
    for (const [group, ids] of wanted) {
      const events = ids.flatMap((id) => (chunks.has(id) ? [{ id, chunk: chunks.get(id)! }] : []));
      // One buffer per group, written whole to each of its tails: one socket write per tail and poll.
      const joined = events.length > 1 ? Buffer.concat(events.map((e) => e.chunk)) : null;
      for (const client of group.clients) client.deliver(events, joined);
    }
  }

  /**
   * Every distinct filter of the open tails over the new logs, in one query: a column per filter saying
   * whether each log matches it.
   */
  private async matchFilters(groups: readonly Group[]): Promise<Map<Group, number[]>> {
    const ids = [...new Set(groups.flatMap((g) => g.candidates))];
    // A search is matched on the new logs' own text: they are not in the search index yet.
    const texts = groups.some((g) => hasSearch(g.client.subscription.filter!))
      ? (
          await this.db.reader
            .selectFrom('logs')
            .select('id')
            .select(searchSourceColumns())
            .where('id', 'in', ids)
            .execute()
        ).map((r) => ({ ...(r as SearchSource), id: Number(r.id) }))
      : [];
    const columns = groups.map((g, i) => {
      const { scope, filter } = g.client.subscription;
      const condition = compileFilter(
        { dialect: this.db.dialect, registry: LOG_FIELDS, organizationId: scope.organizationId },
        hasSearch(filter!) ? planSearchAmong(filter!, texts) : filter!,
      );
      return sql<number>`case when ${condition} then 1 else 0 end`.as(`g${i}`);
    });
    const rows = (await this.db.reader
      .selectFrom('logs')
      .select('logs.id')
      .select(columns)
      .where('logs.id', 'in', ids)
      .execute()) as Record<string, unknown>[];
    const result = new Map<Group, number[]>();
    groups.forEach((g, i) => {
      const candidates = new Set(g.candidates);
      const matched = rows
        .filter((r) => Number(r[`g${i}`]) === 1 && candidates.has(Number(r.id)))
        .map((r) => Number(r.id))
        .sort((a, b) => a - b);
      result.set(g, matched);
    });
    return result;
  }

  /** The event text of each log (its list item, previews as the list's rows), made once. */
  private async events(ids: number[]): Promise<Map<number, Buffer>> {
    const fetched = await fetchPageRows(this.db.reader, ids, null);
    const scores = await scoresOfLogs(
      this.db.reader,
      fetched.map((f) => f.row.id),
    );
    const chunks = new Map<number, Buffer>();
    for (const { row, truncated } of fetched) {
      const id = Number(row.id);
      chunks.set(id, logEvent(id, presentLog(row, scores.get(row.id) ?? {}, truncated)));
    }
    return chunks;
  }

  /** The logs after Last-Event-ID that the tail wants, the newest `backlog` of them, in id order. */
  private async sendBacklog(client: TailClient): Promise<void> {
    const { scope, filter, afterId } = client.subscription;
    const planned = filter && (await planFilter(this.db.reader, this.db.dialect, scope, filter));
    const rows = await filteredLogs(this.db.reader, this.db.dialect, scope, planned)
      .select('logs.id')
      .where('logs.id', '>', afterId!)
      .orderBy('logs.id', 'desc')
      .limit(this.options.backlog)
      .execute();
    const ids = rows.map((r) => Number(r.id)).reverse();
    const chunks = ids.length > 0 ? await this.events(ids) : new Map<number, Buffer>();
    client.caughtUp(ids.flatMap((id) => (chunks.has(id) ? [{ id, chunk: chunks.get(id)! }] : [])));
  }

  /** Ends the tails whose key was revoked (or deleted) since they opened. */
  private async checkCredentials(): Promise<void> {
    const byCredential = new Map<string, TailClient[]>();
    for (const client of this.clients) {
      const list = byCredential.get(client.subscription.credential);
      if (list) list.push(client);
      else byCredential.set(client.subscription.credential, [client]);
    }
    for (const [credential, clients] of byCredential) {
      let valid = true;
      try {
        valid = await this.budgeted(() => this.checkCredential(credential));
      } catch {
        continue; // The database is down: a key seen before keeps working, as on every route.
      }
      if (!valid) for (const client of clients) client.end('key_revoked');
    }
  }
}
