/**
 * The test harness: an app per test file on a fresh database, served over real HTTP on 127.0.0.1.
 */
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { buildApp } from '../../src/app.js';
import { createApiKey, type KeyOwner } from '../../src/auth/api-keys.js';
import { createOrganization, type Organization } from '../../src/auth/organizations.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { DbHandle } from '../../src/db/connect.js';
import { checkResponseContracts } from './response-contracts.js';
import { createLogger } from '../../src/logger.js';
import { KyselyInserter } from '../../src/logs/write/inserter.js';
import type { LogWriter } from '../../src/logs/write/writer.js';
import type { SearchIndexer } from '../../src/logs/search/indexer.js';
import { createServices, type ServiceOverrides } from '../../src/services.js';
import type { RateLimiter } from '../../src/limits/rate-limiter.js';
import type { BudgetKeeper } from '../../src/budgets/budget-keeper.js';
import type { ProviderRegistry } from '../../src/providers/registry.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import type { OutageSwitch } from './outage.js';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly baseUrl: string;
  readonly config: Config;
  readonly db: DbHandle;
  readonly database: TestDatabase;
  readonly secretKey: Buffer;
  readonly writer: LogWriter;
  /**
   * The search indexer, not running unless a test starts it: until `catchUp()` (or `start()`) searches
   * read every log unindexed, which they must answer the same.
   */
  readonly searchIndexer: SearchIndexer;
  /** Resolves once every log acknowledged so far is in the database. */
  flush(): Promise<void>;
  /** Rate limits: `settled()` resolves once every call's correction of its tokens is written. */
  readonly limits: RateLimiter;
  /** Budgets: `settled()` resolves once every call's settlement is written. */
  readonly budgets: BudgetKeeper;
  /** A new organization with a unique name and one key of it. */
  tenant(options?: { isTest?: boolean; owner?: Partial<KeyOwner> }): Promise<Tenant>;
  close(): Promise<void>;
}

export interface Tenant {
  org: Organization;
  key: string;
  keyId: string;
}

/** The environment of a `gatelog` child process (serve, or a command) on `database`: a fresh secret key, any port. */
export function servedEnv(database: TestDatabase, extra: Record<string, string> = {}): Record<string, string> {
  return {
    GATELOG_DATABASE_URL: database.url,
    GATELOG_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    GATELOG_PORT: '0',
    ...extra,
  };
}

/** The environment of an app a test starts in its own process: a served one that logs nothing. */
export function testEnv(database: TestDatabase, extra: Record<string, string> = {}): Record<string, string> {
  return servedEnv(database, { GATELOG_LOG_LEVEL: 'silent', ...extra });
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Adds routes or hooks before the app starts listening (e.g. a route that fails on purpose). */
  beforeListen?: (app: FastifyInstance) => void;
  writer?: ServiceOverrides['writer'];
  /** SQLite only: queries fail while the switch is down (see outage.ts). */
  outage?: OutageSwitch;
  /** Sees every query of every connection the app has (logs written through Kysely then). */
  plugin?: KyselyPlugin;
  /** Receives every service log line (at level info), parsed. */
  logLines?: Record<string, unknown>[];
  /** The provider kinds the app calls; absent: gatelog's own. */
  providerKinds?: ProviderRegistry;
  /** A database made beforehand (an upgrade test's, at an older migration); absent: a fresh one. */
  database?: TestDatabase;
}

export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  const env = options.env ?? {};
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig(testEnv(database, env));
  const { outage, plugin } = options;
  const lines = options.logLines;
  const services = await createServices(config, {
    logger: lines
      ? createLogger('info', { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) })
      : undefined,
    database: (opened) => {
      let db = outage
        ? { ...opened, db: opened.db.withPlugin(outage), holds: opened.holds.withPlugin(outage) }
        : opened;
      if (plugin) {
        db = {
          ...db,
          db: db.db.withPlugin(plugin),
          reader: db.reader.withPlugin(plugin),
          freshReader: db.freshReader.withPlugin(plugin),
          bulk: db.bulk.withPlugin(plugin),
          holds: db.holds.withPlugin(plugin),
        };
      }
      return db;
    },
    // A simulated SQLite outage lives in a Kysely plugin, so the writer must go through Kysely then; a
    // PostgreSQL outage is real (the database refuses connections), met by the writer's own thread.
    inserter: (outage && config.database.kind === 'sqlite') || plugin ? (db) => new KyselyInserter(db.db) : undefined,
    writer: options.writer,
    indexInBackground: false,
    providerKinds: options.providerKinds,
  });
  const { db, secretKey, writer, searchIndexer } = services;
  const app = await buildApp(services);
  const violations = checkResponseContracts(app);
  options.beforeListen?.(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    app,
    baseUrl: `http://127.0.0.1:${port}`,
    config,
    db,
    database,
    secretKey,
    tenant: async (options = {}) => {
      const org = await createOrganization(db.db, `org-${crypto.randomUUID()}`);
      const created = await createApiKey(db.db, {
        organizationId: org.id,
        name: 'test-key',
        isTest: options.isTest ?? false,
        owner: options.owner,
      });
      return { org, key: created.key, keyId: created.id };
    },
    writer,
    searchIndexer,
    flush: () => writer.flush(),
    limits: services.limits,
    budgets: services.budgets,
    close: async () => {
      await app.close();
      await services.close();
      await database.drop();
      if (violations.length > 0) {
        throw new Error(`answers that break their route's declared schema:\n${violations.join('\n')}`);
      }
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON and assert its shape
  body: any;
  text: string;
}

/** One real HTTP call; a JSON body is sent as JSON, the reply parsed as JSON when it is JSON. */
export async function api(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * An app and one tenant of it, what most suites start with:
 * `before(async () => ([t, a] = await startAppWithTenant()));`
 */
export async function startAppWithTenant(options: StartOptions = {}): Promise<[TestApp, Tenant]> {
  const t = await startApp(options);
  return [t, await t.tenant()];
}

/** An app and two tenants of different organizations: for what one organization must not see of the other. */
export async function startAppWithTwoTenants(options: StartOptions = {}): Promise<[TestApp, Tenant, Tenant]> {
  const t = await startApp(options);
  return [t, await t.tenant(), await t.tenant()];
}

/** What twoTenantSuite gives a suite: its app and tenants once started, and calls to its API. */
export interface TwoTenantSuite {
  t: TestApp;
  a: Tenant;
  b: Tenant;
  /** One HTTP call to the app, with tenant a's key unless another is given. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<ApiResponse>;
}

/** An app and two tenants, started before the suite and closed after it (called inside its `describe`). */
export function twoTenantSuite(): TwoTenantSuite {
  const suite = {
    call: (method: string, path: string, body?: unknown, key = suite.a.key) =>
      api(suite.t.baseUrl, method, path, { key, body }),
  } as TwoTenantSuite;
  before(async () => {
    [suite.t, suite.a, suite.b] = await startAppWithTwoTenants();
  });
  after(async () => suite.t.close());
  return suite;
}

/** Closes what a suite started, in the order given, passing over what never started (a `before` that failed). */
export async function closeInOrder(...started: ({ close(): unknown } | undefined)[]): Promise<void> {
  for (const thing of started) await thing?.close();
}
