/**
 * The upstream client's connection pools, one per origin (and per address check: an origin an
 * organization registered connects through the address policy, the operator's own upstreams do not).
 * Any key can register a base_url, and so create an origin: a pool with nothing in flight for a while is
 * closed and forgotten, so that their number follows the origins in use rather than every origin ever
 * called.
 */
import { type Dispatcher, Pool } from 'undici';

interface Entry {
  pool: Pool;
  /** Date.now() of its last call. */
  lastUsed: number;
}

export interface OriginPoolsOptions {
  /** A new pool for an origin; `checked`: its connections go through the address policy. */
  create(origin: string, checked: boolean): Pool;
  /** A pool unused this long, with nothing in flight, is closed. */
  idleMs: number;
}

export class OriginPools {
  private readonly pools = new Map<string, Entry>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly options: OriginPoolsOptions) {}

  /** The pool of an origin, made when there is none. */
  get(origin: string, checked: boolean): Dispatcher {
    const key = `${checked ? 'checked' : 'trusted'} ${origin}`;
    let entry = this.pools.get(key);
    if (entry === undefined) {
      entry = { pool: this.options.create(origin, checked), lastUsed: 0 };
      this.pools.set(key, entry);
      this.sweeper ??= setInterval(() => this.sweep(), Math.max(10, this.options.idleMs / 2)).unref();
    }
    entry.lastUsed = Date.now();
    return entry.pool;
  }

  /** Pools open now (for tests and /metrics). */
  get size(): number {
    return this.pools.size;
  }

  /** Closes the pools idle past idleMs; a call still in flight (a long stream) keeps its pool. */
  private sweep(): void {
    const before = Date.now() - this.options.idleMs;
    for (const [key, entry] of this.pools) {
      if (entry.lastUsed > before || entry.pool.stats.size > 0) continue;
      this.pools.delete(key);
      void entry.pool.close().catch(() => undefined);
    }
    if (this.pools.size === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  async close(): Promise<void> {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    const entries = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(entries.map((e) => e.pool.close()));
  }
}
