/**
 * Open-loop load at a fixed rate over keep-alive connections, with latencies measured in microseconds
 * (autocannon reports whole milliseconds, too coarse for a 1 ms overhead budget). A request is timed
 * from its scheduled send time to the end of its response body, so queueing counts as latency.
 */
import { Pool } from 'undici';

export interface RateResult {
  /** From the call's due time: queueing in the load generator counts (open loop). */
  p50: number;
  p99: number;
  /**
   * From when the call was handed to the client: without the generator's own lag (timer ticks of about
   * a millisecond, so a call waits up to a tick past its due time), what the server and the loopback take.
   */
  sentP50: number;
  sentP99: number;
  ok: number;
  errors: number;
}

export async function rateLoad(
  url: string,
  headers: Record<string, string>,
  body: string,
  rate: number,
  seconds: number,
  connections = 64,
): Promise<RateResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  const fromSent: number[] = [];
  let ok = 0;
  let errors = 0;
  const total = rate * seconds;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      for (; sent < due; sent++) {
        const scheduled = start + (sent * 1000) / rate;
        const handed = performance.now();
        pending.push(
          pool
            .request({ path: target.pathname, method: 'POST', headers, body })
            .then(async (res) => {
              await res.body.arrayBuffer();
              const done = performance.now();
              latencies.push(done - scheduled);
              fromSent.push(done - handed);
              if (res.statusCode < 300) ok++;
              else errors++;
            })
            .catch(() => {
              errors++;
            }),
        );
      }
      if (sent >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  await pool.close();
  latencies.sort((a, b) => a - b);
  fromSent.sort((a, b) => a - b);
  const at = (list: number[], p: number) => list[Math.min(list.length - 1, Math.floor((p / 100) * list.length))];
  return {
    p50: at(latencies, 50),
    p99: at(latencies, 99),
    sentP50: at(fromSent, 50),
    sentP99: at(fromSent, 99),
    ok,
    errors,
  };
}
