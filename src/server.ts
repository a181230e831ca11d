/** `gatelog serve`: config → database → migrations → app → listen; signals → graceful close. */
import { buildApp } from './app.js';
import { resolveSecretKey } from './auth/secret-key.js';
import type { Config } from './config.js';
import { connect } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';

export async function serve(config: Config): Promise<void> {
  const secretKey = resolveSecretKey(config);
  const db = connect(config.database);
  await migrateToLatest(db.db);
  const app = await buildApp({ config, db, secretKey });
  app.addHook('onClose', async () => {
    await db.db.destroy();
  });
  await app.listen({ host: config.host, port: config.port });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
