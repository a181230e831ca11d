/**
 * What the routes and services are built from (createServices in services.ts): every dependency passed
 * in, no module-level singletons. A module of its own, holding types only, so that routes and services
 * can name it without importing the composition root that imports them.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { DbHandle } from './db/connect.js';
import type { PriceTable } from './logs/pricing/price-table.js';
import type { LogWriter } from './logs/write/writer.js';
import type { SearchIndexStatus } from './logs/search/indexer.js';
import type { UpstreamClient } from './providers/upstream-client.js';

export interface AppDeps {
  readonly config: Config;
  readonly db: DbHandle;
  /** Encrypts provider keys at rest (AES-256-GCM). */
  readonly secretKey: Buffer;
  readonly logger: FastifyBaseLogger;
  readonly prices: PriceTable;
  /** Every log, from the logging API or the proxy, is recorded through it. */
  readonly writer: LogWriter;
  /** Calls to model providers. */
  readonly upstream: UpstreamClient;
  /** The background search indexer, as /health reports it. */
  readonly searchIndex: SearchIndexStatus;
}
