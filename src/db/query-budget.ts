/**
 * The budget of the read queries one request makes: a deadline (GATELOG_QUERY_TIMEOUT_MS from the
 * request's start) and the request's abort signal (its client went away). Carried in async context, so
 * that the read connections (a SQLite reader thread, a PostgreSQL read pool) can end a query that
 * outlives either, whoever built it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyReply } from 'fastify';
import { AppError } from '../errors.js';

export interface QueryBudget {
  /** performance.now() time by which every query must be done. */
  deadline: number;
  timeoutMs: number;
  signal: AbortSignal;
}

const storage = new AsyncLocalStorage<QueryBudget>();

export const currentQueryBudget = (): QueryBudget | undefined => storage.getStore();

export function queryTimeout(timeoutMs: number): AppError {
  return new AppError(
    503,
    'query_timeout',
    `The query took longer than ${timeoutMs} ms (GATELOG_QUERY_TIMEOUT_MS) and was stopped; ` +
      'narrow the time range or the filters.',
  );
}

/** The error a query ends with when its client has gone: nobody reads it. */
export const clientGone = () => new AppError(499, 'client_closed_request', 'The client closed the request.');

/**
 * Runs `work` with a budget of `timeoutMs` from now, ended early when the reply's connection closes
 * before the answer was sent (or has closed already).
 */
export function withQueryBudget<T>(reply: FastifyReply, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) controller.abort(clientGone());
  };
  reply.raw.once('close', onClose);
  // A client gone before the reads begin (while the call was authenticated, say) fires no 'close' now.
  if (reply.raw.destroyed) onClose();
  const budget = { deadline: performance.now() + timeoutMs, timeoutMs, signal: controller.signal };
  return storage.run(budget, work).finally(() => reply.raw.off('close', onClose));
}

/**
 * Runs `work` with a budget of its own, `timeoutMs` from now: shared work no request owns (the live
 * tail's poll and backlog), bounded as a request's reads are.
 */
export function withOwnQueryBudget<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const budget = { deadline: performance.now() + timeoutMs, timeoutMs, signal: new AbortController().signal };
  return storage.run(budget, work);
}
