/** The one start-up line of `gatelog serve`: where it listens and what it serves from. */
import { secretKeySource } from './auth/secret-key.js';
import { type Config, describeDatabase } from './config.js';

/** `address`: a URL it listens at (one line per address, as Fastify logs its own). */
export function startLine(config: Config, address: string): string {
  const workers = config.workers > 1 ? ` · ${config.workers} worker processes` : '';
  return (
    `gatelog listening at ${address} · database ${describeDatabase(config.database)} · ` +
    `upstream ${config.openaiBaseUrl} · secret key ${secretKeySource(config)}${workers}`
  );
}
