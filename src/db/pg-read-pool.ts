/**
 * PostgreSQL's read pool: list queries get connections of their own (so they can never take the ones
 * authentication, ingestion and /health use), a server-side statement_timeout, and — per query — the
 * budget of the request that made it (query-budget.ts): past its deadline, or when its client has
 * gone, the query is cancelled instead of running on unseen: pg_cancel_backend sent by another pool on
 * the same server (a pid names a backend of one server only) — the main pool when the reads are on the
 * primary, a connection of their own on a read replica.
 *
 * A summary's passes run in transactions (`set local`): a connection whose statement was stopped there
 * still gets its ROLLBACK, which no budget holds back, and one that would go back to the pool inside a
 * transaction all the same is closed instead — the next request would find every statement refused
 * ("current transaction is aborted").
 */
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { currentQueryBudget, queryTimeout } from './query-budget.js';

/** SQLSTATE of a statement cancelled (statement_timeout or pg_cancel_backend). */
const QUERY_CANCELED = '57014';

/** What ends a transaction that went wrong: sent whatever the budget says, it takes no time. */
const isRollback = (sql: string) => /^\s*rollback\s*$/i.test(sql);

/** A read connection as one request holds it, with the cancel it may have sent. */
interface Held {
  client: pg.PoolClient;
  /** The cancel request sent for this connection's statement, while it may still be on its way. */
  cancelling: Promise<unknown> | null;
}

async function runWithBudget<R>(
  held: Held,
  sql: string,
  parameters: readonly unknown[],
  cancelVia: pg.Pool,
  defaultTimeoutMs: number,
): Promise<PostgresQueryResult<R>> {
  const { client } = held;
  const run = () => client.query(sql, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>;
  const budget = currentQueryBudget();
  try {
    if (!budget || isRollback(sql)) return await run();
    if (budget.signal.aborted) throw budget.signal.reason;
    const remaining = budget.deadline - performance.now();
    if (remaining <= 0) throw queryTimeout(budget.timeoutMs);
    let reason: unknown = null;
    const cancel = (why: unknown) => {
      if (reason !== null) return;
      reason = why;
      const pid = (client as unknown as { processID: number }).processID;
      held.cancelling = cancelVia.query('select pg_cancel_backend($1)', [pid]).catch(() => {});
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

/**
 * Gives a connection back: once a cancel it was sent has arrived (else it could stop the next request's
 * statement on it), and closed rather than pooled when it is still inside a transaction.
 */
function release(held: Held): void {
  const giveBack = () => {
    const status = held.client.getTransactionStatus();
    held.client.release(status === 'T' || status === 'E' ? new Error('released inside a transaction') : undefined);
  };
  if (held.cancelling) void held.cancelling.then(giveBack);
  else giveBack();
}

/** A connection of the read pool, waited for no longer than the request's budget allows. */
async function connectWithinBudget(pool: pg.Pool): Promise<pg.PoolClient> {
  const budget = currentQueryBudget();
  if (!budget) return pool.connect();
  // Nobody waits for the answer any more: no connection is taken (an aborted signal fires no more).
  if (budget.signal.aborted) throw budget.signal.reason;
  if (budget.deadline <= performance.now()) throw queryTimeout(budget.timeoutMs);
  const connecting = pool.connect();
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

/**
 * `cancelVia`: a pool on `pool`'s server that sends the cancels; `ownsCancelPool`: it was made for this
 * read pool and ends with it (a replica's), else it is another's (the primary's main pool).
 */
export function budgetedReadPool(
  pool: pg.Pool,
  cancelVia: pg.Pool,
  defaultTimeoutMs: number,
  ownsCancelPool = false,
): PostgresPool {
  return {
    connect: async (): Promise<PostgresPoolClient> => {
      const held: Held = { client: await connectWithinBudget(pool), cancelling: null };
      return {
        query: ((sql: string, parameters: readonly unknown[]) =>
          runWithBudget(held, sql, parameters, cancelVia, defaultTimeoutMs)) as PostgresPoolClient['query'],
        release: () => release(held),
      };
    },
    end: async () => {
      await pool.end();
      if (ownsCancelPool) await cancelVia.end();
    },
  };
}
