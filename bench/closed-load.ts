/**
 * Closed-loop load of JSON calls across one or more origins (the nodes of one deployment): `concurrency`
 * clients, each sending its next call as soon as its last one is answered, the calls dealt to the
 * origins in turn (round-robin, call by call). A call is timed from its send to the end of its answer's
 * body, in microseconds (autocannon's whole milliseconds are too coarse at these latencies).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

export interface ClosedResult {
  /** Calls answered 2xx. */
  ok: number;
  /** Calls answered otherwise, or failed. */
  errors: number;
  /** From the first send to the last answer (calls in flight at the end are waited for). */
  seconds: number;
  /** Latencies in ms of the 2xx calls. */
  latencies: number[];
}

/** One keep-alive pool per origin, kept across runs so that a warm-up's connections are reused. */
export class ClosedLoad {
  private readonly pools: Pool[];
  private next = 0;

  constructor(
    origins: string[],
    private readonly path: string,
    private readonly headers: Record<string, string>,
    private readonly body: string,
    connections: number,
  ) {
    this.pools = origins.map((o) => new Pool(o, { connections, pipelining: 1, keepAliveTimeout: 60_000 }));
  }

  /** `concurrency` clients for `seconds`; the calls in flight when the time is up are finished. */
  async run(concurrency: number, seconds: number): Promise<ClosedResult> {
    const result: ClosedResult = { ok: 0, errors: 0, seconds: 0, latencies: [] };
    const start = performance.now();
    const stopAt = start + seconds * 1000;
    const client = async () => {
      while (performance.now() < stopAt) {
        const pool = this.pools[this.next++ % this.pools.length];
        const sent = performance.now();
        try {
          const res = await pool.request({ path: this.path, method: 'POST', headers: this.headers, body: this.body });
          await res.body.arrayBuffer();
          if (res.statusCode < 300) {
            result.ok++;
            result.latencies.push(performance.now() - sent);
            continue;
          }
        } catch {
          // counted below
        }
        result.errors++;
        // A deployment that fails at once must not spin this process and starve the servers.
        await sleep(10);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, client));
    result.seconds = (performance.now() - start) / 1000;
    return result;
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}
