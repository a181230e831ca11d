/**
 * GET /health: no auth; 200 when the database answers and logs are being written, 503 otherwise.
 * `dead_letters` counts the logs the database refused, kept in the dead-letter store (0 normally);
 * `retention` is the retention sweep's last run on this node; `search_index` the search indexer on this
 * node (whether it is retrying after a failure, how many logs it set aside); `pid` and `worker` name the
 * process that answered (with `serve --workers N`, one of N); `read_replica`, only with
 * GATELOG_DATABASE_READ_URL, whether the replica answers — the status stays 200 when it does not: calls
 * are proxied and logged all the same, only the lists fail.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { databaseAnswers } from '../../db/answers.js';
import type { AppDeps } from '../../deps.js';
import type { RetentionSweep } from '../../retention/sweep.js';

const SweepReport = z
  .object({
    started_at: z.string(),
    duration_ms: z.number().int(),
    deleted_logs: z.number().int(),
    cleared_logs: z.number().int().describe('Logs whose content was cleared'),
    cache_entries: z.number().int().describe('Expired response-cache entries removed'),
    dead_letters: z.number().int(),
    months: z
      .array(
        z.object({
          month: z.string().describe('yyyy-mm (UTC)'),
          way: z
            .enum(['detached', 'busy', 'by_rows'])
            .describe(
              'detached: whole; busy: its lock was not had, tried again later; by_rows: its logs deleted by rows after failed tries',
            ),
        }),
      )
      .describe('PostgreSQL: the months past every retention this run dealt with (empty on SQLite)'),
    complete: z.boolean().describe('false: the run used its time budget; the next one goes on soon'),
    error: z.string().nullable(),
  })
  .nullable()
  .describe("The retention sweep's last run on this node (null: none yet)");

const SearchIndexReport = z
  .object({
    state: z.enum(['ok', 'retrying']).describe('retrying: its last batch failed; it tries again after a growing pause'),
    set_aside: z
      .number()
      .int()
      .describe('Logs whose search text the database refused even alone: searched directly, not through the index'),
  })
  .describe('The background search indexer on this node');

const ReadReplicaState = z
  .enum(['ok', 'unreachable'])
  .optional()
  .describe('Only with GATELOG_DATABASE_READ_URL: whether the read replica answers (within 2 s)');

const Pid = z.number().int().describe('The process that answered');
const Worker = z
  .number()
  .int()
  .nullable()
  .describe('Which of the worker processes answered, 1 to GATELOG_WORKERS (null: gatelog runs as one process)');

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps, retention: RetentionSweep): void {
  const worker = deps.config.workerSlot;
  const schema = {
    tags: ['Service'],
    summary: 'Whether the database answers and logs are being written (no key needed)',
    security: [],
    response: {
      200: z.object({
        status: z.literal('ok'),
        dead_letters: z.number().int().describe('Logs the database refused'),
        retention: SweepReport,
        search_index: SearchIndexReport,
        read_replica: ReadReplicaState,
        pid: Pid,
        worker: Worker,
      }),
      503: z.object({
        status: z.literal('unavailable'),
        database: z.enum(['ok', 'unreachable']),
        log_writer: z.enum(['ok', 'retrying']),
        log_backlog: z.number().int().describe('Logs waiting to be written'),
        dead_letters: z.number().int(),
        read_replica: ReadReplicaState,
        pid: Pid,
        worker: Worker,
      }),
    },
  };
  app.get('/health', { schema }, async (_request, reply) => {
    const [database, replica] = await Promise.all([databaseAnswers(deps.db.db), deps.db.readReplica?.answers()]);
    const readReplica =
      replica === undefined ? {} : { read_replica: replica ? ('ok' as const) : ('unreachable' as const) };
    if (!database || !deps.writer.healthy) {
      return reply.status(503).send({
        status: 'unavailable',
        database: database ? 'ok' : 'unreachable',
        log_writer: deps.writer.healthy ? 'ok' : 'retrying',
        log_backlog: deps.writer.backlog,
        dead_letters: deps.writer.deadLetterCount,
        ...readReplica,
        pid: process.pid,
        worker,
      });
    }
    return {
      status: 'ok',
      dead_letters: deps.writer.deadLetterCount,
      retention: retention.lastRun,
      search_index: { state: deps.searchIndex.state, set_aside: deps.searchIndex.setAside },
      ...readReplica,
      pid: process.pid,
      worker,
    };
  });
}
