/**
 * Open-loop mixed load over one or several gatelog nodes, as a load balancer would spread it: proxied
 * embeddings calls, single logs and batches of ten through the logging API, at a fixed rate. Every call's
 * outcome is kept, with the ids of the logs it acknowledged, so that a test can count what was sent
 * against what is stored. Used by the suite's load and fault tests and by `npm run bench -- soak`.
 */
import { Pool } from 'undici';

export type CallKind = 'proxied' | 'create' | 'batch';

export interface CallOutcome {
  node: number;
  kind: CallKind;
  /** The HTTP status, or 0 when the call got no answer (connection refused or reset). */
  status: number;
  /** Logs the answer acknowledged: the proxied call's X-Gatelog-Log-Id, or the logging API's unique ids. */
  ids: string[];
  retryAfter: string | null;
  /** Milliseconds from the call's scheduled start to the end of its answer. */
  latencyMs: number;
  /** Milliseconds from the run's start to the call's scheduled start. */
  at: number;
}

export interface MixedLoadOptions {
  nodes: string[];
  key: string;
  rate: number;
  seconds: number;
  /** Of every 10 calls, how many are proxied (the rest: one batch in five, single logs otherwise). */
  proxiedPerTen?: number;
  /** Whether the balancer sends to node `i` now (a node taken out after it was killed). */
  inRotation?: (node: number) => boolean;
  connectionsPerNode?: number;
  /** Called with the outcome of every call as it ends. */
  onOutcome?: (outcome: CallOutcome) => void;
}

export interface MixedLoadResult {
  outcomes: CallOutcome[];
  /** Calls by kind and status, e.g. "proxied 200": 512. */
  tally: Record<string, number>;
}

export async function runMixedLoad(options: MixedLoadOptions): Promise<MixedLoadResult> {
  const { nodes, key, rate, seconds } = options;
  const proxiedPerTen = options.proxiedPerTen ?? 5;
  const inRotation = options.inRotation ?? (() => true);
  const pools = nodes.map(
    (url) =>
      new Pool(url, { connections: options.connectionsPerNode ?? 32, pipelining: 1, connect: { timeout: 2000 } }),
  );
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const outcomes: CallOutcome[] = [];
  const pending = new Set<Promise<void>>();
  const total = Math.round(rate * seconds);
  const start = performance.now();
  let next = 0;
  let turn = 0;

  const call = async (i: number, scheduled: number) => {
    let node = turn++ % nodes.length;
    for (let tries = 0; tries < nodes.length && !inRotation(node); tries++) node = turn++ % nodes.length;
    const slot = i % 10;
    const kind: CallKind = slot < proxiedPerTen ? 'proxied' : slot === 9 ? 'batch' : 'create';
    const { path, body } = requestFor(kind, i);
    const outcome: CallOutcome = { node, kind, status: 0, ids: [], retryAfter: null, latencyMs: 0, at: 0 };
    try {
      const res = await pools[node].request({ path, method: 'POST', headers, body, headersTimeout: 60_000 });
      const text = await res.body.text();
      outcome.status = res.statusCode;
      const retryAfter = res.headers['retry-after'];
      outcome.retryAfter = retryAfter === undefined ? null : String(retryAfter);
      if (kind === 'proxied' && res.statusCode === 200) outcome.ids = [String(res.headers['x-gatelog-log-id'])];
      if (kind !== 'proxied' && res.statusCode === 201) {
        const answer = JSON.parse(text) as { unique_id?: string; unique_ids?: string[] };
        outcome.ids = answer.unique_ids ?? [answer.unique_id!];
      }
    } catch {
      // No answer: nothing acknowledged.
    }
    outcome.latencyMs = performance.now() - scheduled;
    outcome.at = scheduled - start;
    outcomes.push(outcome);
    options.onOutcome?.(outcome);
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      for (; next < due; next++) {
        const p = call(next, start + (next * 1000) / rate);
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      if (next >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  await Promise.all(pools.map((p) => p.close()));

  const tally: Record<string, number> = {};
  for (const o of outcomes) tally[`${o.kind} ${o.status}`] = (tally[`${o.kind} ${o.status}`] ?? 0) + 1;
  return { outcomes, tally };
}

function requestFor(kind: CallKind, i: number): { path: string; body: string } {
  if (kind === 'proxied') {
    return {
      path: '/api/embeddings',
      body: JSON.stringify({
        model: 'text-embedding-3-small',
        input: `load call ${i}`,
        customer_identifier: `c${i % 7}`,
      }),
    };
  }
  const log = (j: number) => ({
    model: ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet'][(i + j) % 3],
    prompt_messages: [{ role: 'user', content: `question ${i}.${j}` }],
    completion_message: { role: 'assistant', content: `answer ${i}.${j}` },
    customer_identifier: `c${(i + j) % 7}`,
    metadata: { load: true, call: i },
  });
  if (kind === 'batch') {
    return {
      path: '/api/request-logs/batch/',
      body: JSON.stringify({ logs: Array.from({ length: 10 }, (_, j) => log(j)) }),
    };
  }
  return { path: '/api/request-logs/create/', body: JSON.stringify(log(0)) };
}

/** Every id the run's answers acknowledged, optionally only those of calls matching `which`. */
export function acknowledgedIds(result: MixedLoadResult, which: (o: CallOutcome) => boolean = () => true): string[] {
  return result.outcomes.filter(which).flatMap((o) => o.ids);
}
