/**
 * Open-loop load at a fixed rate over keep-alive connections, with latencies measured in microseconds
 * (autocannon reports whole milliseconds, too coarse for a 1 ms overhead budget). A request is timed
 * from its scheduled send time to the end of its response body, so queueing counts as latency.
 */
import { Pool } from 'undici';

export interface RateResult {
  p50: number;
  p99: number;
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
        pending.push(
          pool
            .request({ path: target.pathname, method: 'POST', headers, body })
            .then(async (res) => {
              await res.body.arrayBuffer();
              latencies.push(performance.now() - scheduled);
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
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { p50: at(50), p99: at(99), ok, errors };
}
