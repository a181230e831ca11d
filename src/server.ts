/**
 * `gatelog serve` as one process, or as one worker of several (cluster/primary.ts): config → services
 * (services.ts) → app → listen; signals → graceful close.
 */
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { WorkerLink } from './cluster/worker-link.js';
import { type Config, ConfigError } from './config.js';
import { AppError } from './errors.js';
import { createServices } from './services.js';
import { startLine } from './start-line.js';

export async function serve(config: Config): Promise<void> {
  // V8 "pretenures" the objects of an allocation site when most of them outlive a young-generation
  // collection, as a call's objects do while a burst keeps many calls in flight. From then on every
  // call's objects go straight to the old generation and need full collections: at 1,000 calls/s after
  // a burst, one every 0.9 s and a p99 about 10 ms higher (bench/README.md). The flag only changes
  // that policy, read at each collection; it is set before the server allocates anything of its own.
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
  // A worker of `serve --workers N`: its primary migrated the database before forking it.
  const link = WorkerLink.ofThisProcess();
  const services = await createServices(config, link ? { schemaReady: true } : {});
  const { upstream, writer } = services;
  if (link) {
    link.answerGatherings(services.metrics.registry);
    services.metrics.gatherWith(() => link.allMetrics());
  }
  let app: FastifyInstance;
  try {
    app = await buildApp(services);
  } catch (err) {
    await services.close().catch(() => {});
    throw err;
  }
  // After the server stopped accepting and its requests finished.
  app.addHook('onClose', () => services.close());

  let closing = false;
  // A worker's listen is a request to its primary; closing the server before the answer comes makes
  // Node throw from inside the cluster module (net: `handle.close()` on a null handle, when the answer
  // is an error). A shutdown waits for the answer, whichever it is.
  let listening: Promise<unknown> = Promise.resolve();
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    const timeoutMs = config.shutdownTimeoutMs;
    app.log.info({ signal, timeoutMs }, 'shutting down: finishing in-flight requests and writing queued logs');
    // Past the deadline less a margin for writing the queued logs, calls still waiting for a provider
    // are ended (answered 503 and logged) and every connection still open is closed; at the deadline
    // the process exits whatever is left.
    const margin = Math.min(2000, timeoutMs / 5);
    setTimeout(() => {
      app.log.warn('shutdown deadline near: ending calls in flight and closing connections');
      upstream.abortAll(new AppError(503, 'shutting_down', 'gatelog is shutting down; retry the call.'));
      // Long enough for the 503s to be written, short of the margin the queued logs need.
      setTimeout(() => app.server.closeAllConnections(), Math.min(100, margin / 4)).unref();
    }, timeoutMs - margin).unref();
    setTimeout(() => {
      app.log.error({ timeoutMs }, 'shutdown did not finish within GATELOG_SHUTDOWN_TIMEOUT_MS; exiting');
      process.exit(1);
    }, timeoutMs).unref();
    const writtenBefore = writer.stats.written;
    listening
      .catch(() => {})
      .then(() => app.close())
      .then(
        () => {
          const { written } = writer.stats;
          app.log.info(
            {
              signal,
              logsWritten: written,
              writtenWhileStopping: written - writtenBefore,
              deadLetters: writer.deadLetterCount,
            },
            `stopped: ${written} logs written since start, ${written - writtenBefore} of them while stopping`,
          );
          process.exit(0);
        },
        (err) => {
          app.log.error({ err }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Registered before listening, so a signal that arrives as soon as the port is open is handled.
  process.on('SIGINT', () => shutdown('SIGINT'));
  link?.onPrimaryGone(() => shutdown('primary exited'));
  const addresses: string[] = [];
  try {
    // Fastify logs this text once per address it listens on: one process's start-up line; a worker's
    // own line, the primary logging the start-up line once every worker listens.
    listening = app.listen({
      host: config.host,
      port: config.port,
      listenTextResolver: (address) => {
        addresses.push(address);
        return link
          ? `worker ${config.workerSlot} (pid ${process.pid}) listening at ${address}`
          : startLine(config, address);
      },
    });
    await listening;
  } catch (err) {
    // Told to stop while it began to listen (a primary stopping every worker because another could not
    // start): the shutdown under way exits; this failure is its doing, not one to report.
    if (closing) return;
    await app.close().catch(() => {});
    throw listenError(config, err as NodeJS.ErrnoException);
  }
  link?.ready(addresses);
}

function listenError(config: Config, err: NodeJS.ErrnoException): Error {
  const where = `${config.host}:${config.port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new ConfigError('GATELOG_PORT', `${where} is already in use (another gatelog?); choose another port`);
    case 'EACCES':
      return new ConfigError('GATELOG_PORT', `not allowed to listen on ${where}; ports below 1024 need privileges`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(
        'GATELOG_HOST',
        `cannot listen on ${where}: this machine has no such address (${err.code})`,
      );
    default:
      return err;
  }
}
