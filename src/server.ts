/** `gatelog serve`: config → database → migrations → app → listen; signals → graceful close. */
import v8 from 'node:v8';
import { buildApp } from './app.js';
import { resolveSecretKey, secretKeySource } from './auth/secret-key.js';
import { type Config, ConfigError, describeDatabase } from './config.js';
import { openDatabase } from './db/open.js';
import { loadPriceTable } from './logs/pricing/price-table.js';
import { createLogger } from './logger.js';
import { DeadLetterStore } from './logs/write/dead-letters.js';
import { inserterFor } from './logs/write/inserter.js';
import { LogWriter } from './logs/write/writer.js';
import { SearchIndexer } from './logs/search/indexer.js';
import { AppError } from './errors.js';
import { createUpstreamClient } from './gateway/core/loop-guard.js';

export async function serve(config: Config): Promise<void> {
  // V8 "pretenures" the objects of an allocation site when most of them outlive a young-generation
  // collection, as a call's objects do while a burst keeps many calls in flight. From then on every
  // call's objects go straight to the old generation and need full collections: at 1,000 calls/s after
  // a burst, one every 0.9 s and a p99 about 10 ms higher (bench/README.md). The flag only changes
  // that policy, read at each collection; it is set before the server allocates anything of its own.
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
  const prices = loadPriceTable(config.pricingFile);
  const logger = createLogger(config.logLevel);
  prices.onUnpriced = (model) =>
    logger.warn({ model }, 'no price for this model: its calls cost 0 (set one in GATELOG_PRICING_FILE)');
  // The database first: the secret key file lives beside a SQLite file, in the directory opening makes.
  const { handle: db } = await openDatabase(config.database, { queryTimeoutMs: config.queryTimeoutMs });
  const secretKey = resolveSecretKey(config);
  const deadLetters = new DeadLetterStore(db.db);
  await deadLetters.init();
  if (deadLetters.count > 0)
    logger.warn({ dead_letters: deadLetters.count }, 'the dead-letter store holds refused logs');
  const writer = new LogWriter(inserterFor(db), logger, { deadLetters });
  const upstream = createUpstreamClient(config, secretKey);
  // Fills the search index in the background, off the write path (docs/decisions.md "Search index").
  const searchIndexer = new SearchIndexer(db, writer, logger);
  const app = await buildApp({ config, db, secretKey, logger, prices, writer, upstream, searchIndex: searchIndexer });
  searchIndexer.start();
  // Runs after the server stopped accepting and in-flight requests finished: every acknowledged log
  // is written before the database closes.
  app.addHook('onClose', async () => {
    await writer.close();
    await searchIndexer.stop();
    await upstream.close();
    await db.close();
  });

  let closing = false;
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
    app.close().then(
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
  try {
    // Fastify logs this text once per address it listens on: the one start-up line.
    await app.listen({
      host: config.host,
      port: config.port,
      listenTextResolver: (address) =>
        `gatelog listening at ${address} · database ${describeDatabase(config.database)} · ` +
        `upstream ${config.openaiBaseUrl} · secret key ${secretKeySource(config)}`,
    });
  } catch (err) {
    await app.close().catch(() => {});
    throw listenError(config, err as NodeJS.ErrnoException);
  }
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
