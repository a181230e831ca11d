/**
 * PostgreSQL's read pool: list queries get connections of their own (so they can never take the ones
 * authentication, ingestion and /health use), a server-side statement_timeout, and — per query — the
 * budget of the request that made it (query-budget.ts): past its deadline, or when its client has
 * gone, the query is cancelled (pg_cancel_backend from the main pool) instead of running on unseen.
 */
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { currentQueryBudget, queryTimeout } from './query-budget.js';

/** SQLSTATE of a statement cancelled (statement_timeout or pg_cancel_backend). */
const QUERY_CANCELED = '57014';

async function runWithBudget<R>(
  client: pg.PoolClient,
  sql: string,
  parameters: readonly unknown[],
  cancelVia: pg.Pool,
  defaultTimeoutMs: number,
): Promise<PostgresQueryResult<R>> {
  const run = () => client.query(sql, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>;
  const budget = currentQueryBudget();
  try {
    if (!budget) return await run();
    if (budget.signal.aborted) throw budget.signal.reason;
    const remaining = budget.deadline - performance.now();
    if (remaining <= 0) throw queryTimeout(budget.timeoutMs);
    let reason: unknown = null;
    const cancel = (why: unknown) => {
      if (reason !== null) return;
      reason = why;
      const pid = (client as unknown as { processID: number }).processID;
      cancelVia.query('select pg_cancel_backend($1)', [pid]).catch(() => {});
    };
    const timer = setTimeout(() => cancel(queryTimeout(budget.timeoutMs)), remaining);
    const onAbort = () => cancel(budget.signal.reason);
    budget.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await run();
    } catch (err) {
      throw reason ?? err;
    } finally {
      clearTimeout(timer);
      budget.signal.removeEventListener('abort', onAbort);
    }
  } catch (err) {
    if ((err as { code?: unknown }).code === QUERY_CANCELED) throw queryTimeout(budget?.timeoutMs ?? defaultTimeoutMs);
    throw err;
  }
}

/** A connection of the read pool, waited for no longer than the request's budget allows. */
async function connectWithinBudget(pool: pg.Pool): Promise<pg.PoolClient> {
  const budget = currentQueryBudget();
  const connecting = pool.connect();
  if (!budget) return connecting;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(queryTimeout(budget.timeoutMs)), Math.max(0, budget.deadline - performance.now()));
    onAbort = () => reject(budget.signal.reason);
    budget.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([connecting, gaveUp]);
  } catch (err) {
    // The connection still comes, later: straight back to the pool.
    connecting.then(
      (client) => client.release(),
      () => {},
    );
    throw err;
  } finally {
    clearTimeout(timer);
    if (onAbort) budget.signal.removeEventListener('abort', onAbort);
  }
}

export function budgetedReadPool(pool: pg.Pool, cancelVia: pg.Pool, defaultTimeoutMs: number): PostgresPool {
  return {
    connect: async (): Promise<PostgresPoolClient> => {
      const client = await connectWithinBudget(pool);
      return {
        query: ((sql: string, parameters: readonly unknown[]) =>
          runWithBudget(client, sql, parameters, cancelVia, defaultTimeoutMs)) as PostgresPoolClient['query'],
        release: () => client.release(),
      };
    },
    end: () => pool.end(),
  };
}
