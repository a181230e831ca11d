/**
 * `gatelog serve --workers N` with N > 1 (docs/decisions.md "Worker processes"): this process, the
 * primary, serves nothing itself. It brings the schema up to date and makes the secret key file once,
 * then forks N workers (node:cluster), each a whole gatelog serving the one port, and supervises them:
 *
 * - Start-up: the start-up line is logged once every worker listens. A worker that fails before that
 *   is a start-up failure, as for one process: its one line on stderr, the others stopped, exit 1.
 * - A worker that exits afterwards is replaced in its slot (restart-backoff.ts: at once after a stable
 *   run, with a growing pause when it keeps failing soon after it starts).
 * - SIGTERM or SIGINT: every worker is told to stop (SIGTERM) and stops as one process does — its calls
 *   in flight finished, its queued logs written; the primary exits once all have, with status 0 if each
 *   stopped cleanly.
 * - /metrics: a scraped worker asks here for every worker's figures summed (cluster-metrics.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import type { FastifyBaseLogger } from 'fastify';
import { resolveSecretKey } from '../auth/secret-key.js';
import { type Config, WORKER_SLOT_VARIABLE } from '../config.js';
import { openDatabase } from '../db/open.js';
import { createLogger } from '../logger.js';
import { startLine } from '../start-line.js';
import { ClusterMetrics } from './cluster-metrics.js';
import { isGatelogMessage, type WorkerMessage } from './messages.js';
import { RestartBackoff } from './restart-backoff.js';

/** Past GATELOG_SHUTDOWN_TIMEOUT_MS, by which every worker has exited on its own, this much more. */
const SHUTDOWN_GRACE_MS = 5_000;

interface Slot {
  /** 1 to N: what the worker in it is called, and (config.workerSlot) what it knows itself as. */
  readonly number: number;
  worker: Worker | null;
  /** When its worker became ready (performance.now()); null while it starts. */
  readyAt: number | null;
  /** Where its worker listens, once ready. */
  addresses: string[];
  /** Why its worker could not start, as it said before exiting. */
  failure: string | null;
  readonly backoff: RestartBackoff;
  restart: NodeJS.Timeout | null;
}

export async function superviseWorkers(config: Config): Promise<void> {
  // Once, before any worker opens the database: two at once could each find the key file missing, and
  // one read the other's before it was written.
  const { handle } = await openDatabase(config.database);
  try {
    resolveSecretKey(config);
  } finally {
    await handle.close();
  }
  new Supervisor(config, createLogger(config.logLevel)).start();
}

class Supervisor {
  private readonly slots: Slot[];
  /** Every worker of the first generation became ready, and the start-up line was logged. */
  private started = false;
  /** Why the workers are being stopped; null while they serve. */
  private stopping: string | null = null;
  /** A worker exited uncleanly while stopping (or start-up failed): the exit status is 1. */
  private unclean = false;
  private readonly metrics = new ClusterMetrics(() =>
    this.slots.flatMap((s) => (s.worker !== null && s.readyAt !== null ? [s.worker] : [])),
  );

  constructor(
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
  ) {
    this.slots = Array.from({ length: config.workers }, (_, i) => ({
      number: i + 1,
      worker: null,
      readyAt: null,
      addresses: [],
      failure: null,
      backoff: new RestartBackoff(),
      restart: null,
    }));
  }

  start(): void {
    cluster.on('message', (worker, message) => this.onMessage(worker, message));
    cluster.on('exit', (worker, code, signal) => {
      // Its last messages (why it could not start) come before its channel closes, which may be after.
      if (worker.isConnected()) worker.once('disconnect', () => this.onExit(worker, code, signal));
      else this.onExit(worker, code, signal);
    });
    process.on('SIGTERM', () => this.stop('SIGTERM'));
    process.on('SIGINT', () => this.stop('SIGINT'));
    for (const slot of this.slots) this.fork(slot);
  }

  private fork(slot: Slot): void {
    slot.restart = null;
    slot.readyAt = null;
    slot.failure = null;
    slot.worker = cluster.fork({
      [WORKER_SLOT_VARIABLE]: String(slot.number),
      // The count, as the flag may have given it: a worker reads its settings from the environment.
      GATELOG_WORKERS: String(this.config.workers),
    });
  }

  private slotOf(worker: Worker): Slot | undefined {
    return this.slots.find((s) => s.worker === worker);
  }

  private onMessage(worker: Worker, message: unknown): void {
    if (!isGatelogMessage<WorkerMessage>(message)) return;
    const slot = this.slotOf(worker);
    switch (message.type) {
      case 'gatelog:ready':
        if (!slot) return;
        slot.readyAt = performance.now();
        slot.addresses = message.addresses;
        if (!this.started && this.stopping === null && this.slots.every((s) => s.readyAt !== null)) {
          this.started = true;
          for (const address of this.slots[0].addresses) this.log.info(startLine(this.config, address));
        }
        return;
      case 'gatelog:failed':
        if (slot) slot.failure = message.message;
        return;
      case 'gatelog:metrics':
        void this.metrics.answer(worker, message.id);
        return;
      case 'gatelog:metrics-json':
        this.metrics.received(worker, message.id, message.metrics);
        return;
    }
  }

  private onExit(worker: Worker, code: number | null, signal: string | null): void {
    this.metrics.gone(worker);
    const slot = this.slotOf(worker);
    if (!slot) return;
    slot.worker = null;
    const pid = worker.process.pid;
    const readyForMs = slot.readyAt === null ? null : performance.now() - slot.readyAt;
    if (this.stopping !== null) {
      // Killed before it could listen (a signal before its handlers were set) is no loss: it held nothing.
      if ((code !== null && code !== 0) || (signal !== null && readyForMs !== null)) this.unclean = true;
      this.exitWhenAllGone();
      return;
    }
    const how = signal !== null ? `killed by ${signal}` : `exited with status ${code}`;
    if (!this.started) {
      this.unclean = true;
      this.stopAll('start-up failed');
      process.stderr.write(`gatelog: ${slot.failure ?? `worker ${slot.number} (pid ${pid}) ${how} while starting`}\n`);
      this.exitWhenAllGone();
      return;
    }
    const pauseMs = slot.backoff.exited(readyForMs);
    this.log.error(
      { worker: slot.number, workerPid: pid, code, signal, reason: slot.failure ?? undefined, restartInMs: pauseMs },
      `worker ${slot.number} (pid ${pid}) ${how}; starting another${pauseMs > 0 ? ` in ${pauseMs} ms` : ''}`,
    );
    slot.restart = setTimeout(() => this.fork(slot), pauseMs);
  }

  private stop(signal: string): void {
    if (this.stopping !== null) return;
    const timeoutMs = this.config.shutdownTimeoutMs;
    this.log.info(
      { signal, timeoutMs, workers: this.config.workers },
      'shutting down: every worker finishes its calls in flight and writes its queued logs',
    );
    this.stopAll(signal);
    setTimeout(() => {
      const left = this.slots.filter((s) => s.worker !== null);
      this.log.error(
        { workers: left.map((s) => s.number) },
        'workers still running past the shutdown deadline; killing them',
      );
      for (const slot of left) slot.worker?.process.kill('SIGKILL');
      process.exit(1);
    }, timeoutMs + SHUTDOWN_GRACE_MS).unref();
    this.exitWhenAllGone();
  }

  /** No worker is restarted from now on, and each one running is told to stop. */
  private stopAll(reason: string): void {
    this.stopping = reason;
    for (const slot of this.slots) {
      if (slot.restart !== null) clearTimeout(slot.restart);
      slot.restart = null;
      // A worker that already exited (its exit not yet seen here) cannot be signalled: no matter.
      if (slot.worker !== null && !slot.worker.isDead()) slot.worker.process.kill('SIGTERM');
    }
  }

  private exitWhenAllGone(): void {
    if (this.slots.some((s) => s.worker !== null)) return;
    if (this.started) {
      this.log.info({ clean: !this.unclean }, `stopped: all ${this.config.workers} workers have exited`);
    }
    process.exit(this.unclean ? 1 : 0);
  }
}
