/**
 * The only reader of process.env. Every variable (settings.ts lists them) is read once, validated, and
 * frozen; a bad value throws a ConfigError naming the variable, which stops start-up.
 */
import cluster from 'node:cluster';
import net from 'node:net';
import path from 'node:path';
import { usableCores } from './util/cores.js';

export type DatabaseTarget =
  | { kind: 'sqlite'; path: string; isDefault: boolean }
  /** readUrl: GATELOG_DATABASE_READ_URL, a read replica serving the lists (db/connect.ts); absent: none. */
  | { kind: 'postgres'; url: string; readUrl?: string };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly database: DatabaseTarget;
  readonly host: string;
  readonly port: number;
  /** Raw GATELOG_SECRET_KEY, decoded; null means "resolve from the key file" (SQLite only). */
  readonly secretKey: Buffer | null;
  readonly openaiBaseUrl: string;
  /** Where the `anthropic` provider's API is when it was registered without a base_url. */
  readonly anthropicBaseUrl: string;
  readonly upstreamTimeoutMs: number;
  readonly publicUrl: string | null;
  readonly logLevel: LogLevel;
  readonly pricingFile: string | null;
  /** The longest a graceful shutdown takes, whatever clients do. */
  readonly shutdownTimeoutMs: number;
  /** The longest a client may take to send a whole request (headers and body); then 408. */
  readonly requestTimeoutMs: number;
  /** Hosts (lower case, without port) upstream base URLs may name; null: any http(s) host. */
  readonly upstreamAllowedHosts: ReadonlySet<string> | null;
  /**
   * Whether an organization's provider base_url may reach loopback, link-local, private and unspecified
   * addresses (providers/address-policy.ts); checked on the address connected to.
   */
  readonly upstreamPrivateAddresses: 'allow' | 'deny';
  /** Addresses a provider base_url may reach whatever upstreamPrivateAddresses says (the metadata address included). */
  readonly upstreamAllowedAddresses: readonly AddressRange[];
  /** The largest upstream answer one call may hold in memory; a larger one is a 502. */
  readonly upstreamMaxResponseBytes: number;
  /** A streamed answer whose provider sends nothing this long is ended with stream_timeout. */
  readonly streamIdleTimeoutMs: number;
  /** A streamed answer gets a keepalive comment after this long without an event. */
  readonly streamKeepaliveMs: number;
  /** GATELOG_STREAM_MAX_DURATION_MS: the longest a streamed answer may last, however busy its provider. */
  readonly streamMaxDurationMs: number;
  /** Connections per provider origin; null: no limit (streams hold theirs for minutes, so a cap queues them). */
  readonly upstreamMaxConnections: number | null;
  /** Failures in a row after which an upstream is skipped for circuitCooldownMs; null: never. */
  readonly circuitFailures: number | null;
  readonly circuitCooldownMs: number;
  /**
   * GATELOG_BUDGET_HOLD_MS: how long a budget reservation is held at most (longer than any call lasts);
   * one left by a node that died is given back then.
   */
  readonly budgetHoldMs: number;
  /** GATELOG_ALERT_RETRY_MS: the wait before a budget alert's first retry, doubled after each. */
  readonly alertRetryMs: number;
  /** GATELOG_ALERT_POLL_MS: how often each node looks for budget alerts due. */
  readonly alertPollMs: number;
  /** The response cache's bound, in bytes of stored answers. */
  readonly cacheMaxBytes: number;
  /** Characters of a streamed completion's text the log keeps per field. */
  readonly logMaxBytes: number;
  /** Bytes of audio uploads held by all calls at once; past it, 503. */
  readonly uploadMemoryBytes: number;
  /** Logs older than this many days are deleted; 0: kept forever (an organization may override it). */
  readonly retentionDays: number;
  /** Logs' content older than this many days is cleared, metrics kept; 0: as retentionDays. */
  readonly contentRetentionDays: number;
  /** Time between two runs of the retention sweep. */
  readonly retentionIntervalMs: number;
  /** The longest the read queries of one list call may take; then 503 query_timeout. */
  readonly queryTimeoutMs: number;
  /** The Bearer token GET /metrics requires; null: /metrics is open. */
  readonly metricsToken: string | null;
  /** Live-tail connections one node holds at once; beyond, 429. */
  readonly tailMaxClients: number;
  /** Where the web UI is served ("/ui"), or null when it is switched off. */
  readonly uiPath: string | null;
  /**
   * GATELOG_WORKERS (or `serve --workers`): processes serving the port (cluster/primary.ts); 1 is one
   * process, no cluster. Default: one per core, one for an in-memory database.
   */
  readonly workers: number;
  /**
   * In a worker process forked by `serve`'s primary: its place, 1 to `workers` (a worker restarted after
   * a crash takes its predecessor's). null in any other process. Set by the primary (WORKER_SLOT_VARIABLE),
   * not a setting.
   */
  readonly workerSlot: number | null;
}

/** An address or a CIDR range, as GATELOG_UPSTREAM_ALLOWED_ADDRESSES lists them. */
export interface AddressRange {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_DATABASE_PATH = './data/gatelog.db';
/** The variable through which the primary tells a worker it forks its slot (config.workerSlot). */
export const WORKER_SLOT_VARIABLE = 'GATELOG_WORKER_SLOT';
/** GATELOG_LOG_MAX_BYTES when unset: what a log keeps of a call's prompt, and of its answer (1 MB). */
export const DEFAULT_LOG_MAX_BYTES = 1024 * 1024;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

/** "/ui" by default; "off" switches the UI off; any other value is a path of letters, digits, - and _. */
function parseUiPath(raw: string | undefined): string | null {
  const value = raw?.trim() ?? '';
  if (value === '') return '/ui';
  if (value === 'off') return null;
  const path = `/${value.replace(/^\/+|\/+$/g, '')}`;
  // /api/ and /v1/ hold the API (/v1/: the proxied routes' aliases).
  const apiPath = ['/api', '/v1'].some((p) => path === p || path.startsWith(`${p}/`));
  if (!/^(\/[A-Za-z0-9_-]+)+$/.test(path) || apiPath) {
    throw new ConfigError('GATELOG_UI_PATH', 'must be a path such as /ui (not under /api or /v1), or off');
  }
  return path;
}

function parseDatabase(raw: string | undefined): DatabaseTarget {
  if (raw === undefined || raw.trim() === '') {
    return { kind: 'sqlite', path: DEFAULT_DATABASE_PATH, isDefault: true };
  }
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError('GATELOG_DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return { kind: 'postgres', url: value };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(
      'GATELOG_DATABASE_URL',
      `unsupported scheme in '${value.split('://')[0]}://'; use a SQLite file path, sqlite:PATH, :memory: or postgres://`,
    );
  }
  const file = value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : value;
  if (file === '') throw new ConfigError('GATELOG_DATABASE_URL', 'sqlite: needs a file path');
  return { kind: 'sqlite', path: file, isDefault: false };
}

/**
 * GATELOG_DATABASE_READ_URL: a streaming replica of the PostgreSQL database, for the read pool. On SQLite
 * it is an error, not ignored: a replica someone set up and meant to use would otherwise serve nothing.
 */
function withReadReplica(database: DatabaseTarget, raw: string | undefined): DatabaseTarget {
  const value = raw?.trim() ?? '';
  if (value === '') return database;
  const variable = 'GATELOG_DATABASE_READ_URL';
  if (database.kind === 'sqlite') {
    throw new ConfigError(variable, 'a read replica needs PostgreSQL, but GATELOG_DATABASE_URL is SQLite; unset it');
  }
  if (!/^postgres(ql)?:\/\//i.test(value)) throw new ConfigError(variable, 'must be a postgres:// URL');
  try {
    new URL(value);
  } catch {
    throw new ConfigError(variable, 'is not a valid postgres:// URL');
  }
  return { ...database, readUrl: value };
}

function parsePort(env: Env): number {
  const name = env.GATELOG_PORT !== undefined ? 'GATELOG_PORT' : 'PORT';
  const raw = env.GATELOG_PORT ?? env.PORT;
  if (raw === undefined || raw === '') return 8080;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    throw new ConfigError(name, `must be an integer port between 0 and 65535, got '${raw}'`);
  }
  return port;
}

/** Accepts 32 bytes as base64 (standard or url-safe) or as 64 hex digits. */
export function decodeSecretKey(raw: string, variable = 'GATELOG_SECRET_KEY'): Buffer {
  const value = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes;
  }
  throw new ConfigError(variable, 'must be 32 bytes encoded as base64 or 64 hex digits');
}

function parseHttpUrl(variable: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(variable, `is not a valid URL: '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(variable, 'must be an http:// or https:// URL');
  }
  return raw.replace(/\/+$/, '');
}

function parsePositiveInt(variable: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new ConfigError(variable, `must be a positive integer, got '${raw}'`);
  }
  return Number(raw);
}

/**
 * GATELOG_WORKERS or `serve --workers` (`name`): a positive count; unset, one per core this process may
 * use (a container's CPU quota counted: util/cores.ts). An in-memory database lives in one process, so
 * it is served by one, and asking for more is an error.
 */
export function parseWorkers(name: string, raw: string | undefined, database: DatabaseTarget): number {
  const memory = database.kind === 'sqlite' && database.path === ':memory:';
  if (raw === undefined || raw.trim() === '') return memory ? 1 : usableCores();
  const workers = parsePositiveInt(name, raw.trim(), 1);
  if (memory && workers > 1) {
    throw new ConfigError(name, 'an in-memory database (:memory:) lives in one process; use 1, or a database file');
  }
  return workers;
}

/** A worker's slot, as its primary set it; null outside a cluster worker. */
function parseWorkerSlot(raw: string | undefined, workers: number): number | null {
  if (!cluster.isWorker || raw === undefined) return null;
  const slot = Number(raw);
  return Number.isInteger(slot) && slot >= 1 && slot <= workers ? slot : null;
}

/** A number of days, 0 (the default) meaning forever. */
function parseDays(variable: string, raw: string | undefined): number {
  if (raw === undefined || raw === '' || raw === '0') return 0;
  return parsePositiveInt(variable, raw, 0);
}

/** A count where 0 (the default) means no limit. */
function parseLimit(variable: string, raw: string | undefined): number | null {
  if (raw === undefined || raw === '' || raw === '0') return null;
  return parsePositiveInt(variable, raw, 0);
}

/** A comma-separated list of host names; empty or unset means no restriction. */
function parseHostList(raw: string | undefined): ReadonlySet<string> | null {
  const hosts = (raw ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const host of hosts) {
    if (!/^[a-z0-9.\-[\]:]+$/.test(host) || host.includes('/')) {
      throw new ConfigError('GATELOG_UPSTREAM_ALLOWED_HOSTS', `'${host}' is not a host name (no scheme, port or path)`);
    }
  }
  return hosts.length > 0 ? new Set(hosts) : null;
}

/** `allow` (the default) or `deny`. */
function parsePrivateAddresses(raw: string | undefined): 'allow' | 'deny' {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || value === 'allow') return 'allow';
  if (value === 'deny') return 'deny';
  throw new ConfigError('GATELOG_UPSTREAM_PRIVATE_ADDRESSES', `must be allow or deny, got '${raw}'`);
}

/** Comma-separated IP addresses and CIDR ranges (10.0.0.5, 10.0.0.0/8, fd00::/8). */
function parseAddressRanges(raw: string | undefined): readonly AddressRange[] {
  const ranges: AddressRange[] = [];
  for (const item of (raw ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)) {
    const [address, prefixText, extra] = item.replace(/^\[|\](?=\/|$)/g, '').split('/');
    const version = net.isIP(address);
    const max = version === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (version === 0 || extra !== undefined || !/^\d*$/.test(prefixText ?? '') || prefix > max || prefixText === '') {
      throw new ConfigError(
        'GATELOG_UPSTREAM_ALLOWED_ADDRESSES',
        `'${item}' is not an IP address or a CIDR range (such as 10.0.0.5 or 10.0.0.0/8)`,
      );
    }
    ranges.push({ address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' });
  }
  return ranges;
}

export function loadConfig(env: Env = process.env): Config {
  const database = withReadReplica(parseDatabase(env.GATELOG_DATABASE_URL), env.GATELOG_DATABASE_READ_URL);
  const rawSecret = env.GATELOG_SECRET_KEY;
  const secretKey = rawSecret !== undefined && rawSecret !== '' ? decodeSecretKey(rawSecret) : null;
  if (secretKey === null && database.kind === 'postgres') {
    throw new ConfigError('GATELOG_SECRET_KEY', 'is required when GATELOG_DATABASE_URL is a PostgreSQL URL');
  }
  const logLevel = (env.GATELOG_LOG_LEVEL ?? 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('GATELOG_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const host = env.GATELOG_HOST?.trim() || '127.0.0.1';
  const pricingFile = env.GATELOG_PRICING_FILE?.trim() || null;
  const openaiBaseUrl = parseHttpUrl(
    'GATELOG_OPENAI_BASE_URL',
    env.GATELOG_OPENAI_BASE_URL || 'https://api.openai.com/v1',
  );
  const anthropicBaseUrl = parseHttpUrl(
    'GATELOG_ANTHROPIC_BASE_URL',
    env.GATELOG_ANTHROPIC_BASE_URL || 'https://api.anthropic.com',
  );
  const upstreamAllowedHosts = parseHostList(env.GATELOG_UPSTREAM_ALLOWED_HOSTS);
  if (upstreamAllowedHosts && !upstreamAllowedHosts.has(new URL(openaiBaseUrl).hostname.toLowerCase())) {
    throw new ConfigError(
      'GATELOG_UPSTREAM_ALLOWED_HOSTS',
      `does not hold the host of GATELOG_OPENAI_BASE_URL (${new URL(openaiBaseUrl).hostname})`,
    );
  }
  const workers = parseWorkers('GATELOG_WORKERS', env.GATELOG_WORKERS, database);
  return Object.freeze({
    database,
    host,
    port: parsePort(env),
    secretKey,
    openaiBaseUrl,
    anthropicBaseUrl,
    upstreamTimeoutMs: parsePositiveInt('GATELOG_UPSTREAM_TIMEOUT_MS', env.GATELOG_UPSTREAM_TIMEOUT_MS, 600_000),
    publicUrl: env.GATELOG_PUBLIC_URL ? parseHttpUrl('GATELOG_PUBLIC_URL', env.GATELOG_PUBLIC_URL) : null,
    logLevel,
    pricingFile: pricingFile ? path.resolve(pricingFile) : null,
    shutdownTimeoutMs: parsePositiveInt('GATELOG_SHUTDOWN_TIMEOUT_MS', env.GATELOG_SHUTDOWN_TIMEOUT_MS, 25_000),
    requestTimeoutMs: parsePositiveInt('GATELOG_REQUEST_TIMEOUT_MS', env.GATELOG_REQUEST_TIMEOUT_MS, 120_000),
    upstreamAllowedHosts,
    upstreamPrivateAddresses: parsePrivateAddresses(env.GATELOG_UPSTREAM_PRIVATE_ADDRESSES),
    upstreamAllowedAddresses: parseAddressRanges(env.GATELOG_UPSTREAM_ALLOWED_ADDRESSES),
    metricsToken: env.GATELOG_METRICS_TOKEN?.trim() || null,
    uiPath: parseUiPath(env.GATELOG_UI_PATH),
    queryTimeoutMs: parsePositiveInt('GATELOG_QUERY_TIMEOUT_MS', env.GATELOG_QUERY_TIMEOUT_MS, 30_000),
    tailMaxClients: parsePositiveInt('GATELOG_TAIL_MAX_CLIENTS', env.GATELOG_TAIL_MAX_CLIENTS, 100),
    upstreamMaxResponseBytes: parsePositiveInt(
      'GATELOG_UPSTREAM_MAX_RESPONSE_BYTES',
      env.GATELOG_UPSTREAM_MAX_RESPONSE_BYTES,
      64 * 1024 * 1024,
    ),
    streamIdleTimeoutMs: parsePositiveInt(
      'GATELOG_STREAM_IDLE_TIMEOUT_MS',
      env.GATELOG_STREAM_IDLE_TIMEOUT_MS,
      300_000,
    ),
    streamKeepaliveMs: parsePositiveInt('GATELOG_STREAM_KEEPALIVE_MS', env.GATELOG_STREAM_KEEPALIVE_MS, 15_000),
    streamMaxDurationMs: parsePositiveInt(
      'GATELOG_STREAM_MAX_DURATION_MS',
      env.GATELOG_STREAM_MAX_DURATION_MS,
      3_600_000,
    ),
    upstreamMaxConnections: parseLimit('GATELOG_UPSTREAM_MAX_CONNECTIONS', env.GATELOG_UPSTREAM_MAX_CONNECTIONS),
    circuitFailures:
      env.GATELOG_CIRCUIT_FAILURES === undefined
        ? 5
        : parseLimit('GATELOG_CIRCUIT_FAILURES', env.GATELOG_CIRCUIT_FAILURES),
    circuitCooldownMs: parsePositiveInt('GATELOG_CIRCUIT_COOLDOWN_MS', env.GATELOG_CIRCUIT_COOLDOWN_MS, 30_000),
    budgetHoldMs: parsePositiveInt('GATELOG_BUDGET_HOLD_MS', env.GATELOG_BUDGET_HOLD_MS, 7_200_000),
    alertRetryMs: parsePositiveInt('GATELOG_ALERT_RETRY_MS', env.GATELOG_ALERT_RETRY_MS, 10_000),
    alertPollMs: parsePositiveInt('GATELOG_ALERT_POLL_MS', env.GATELOG_ALERT_POLL_MS, 5_000),
    cacheMaxBytes: parsePositiveInt('GATELOG_CACHE_MAX_MB', env.GATELOG_CACHE_MAX_MB, 1024) * 1024 * 1024,
    logMaxBytes: parsePositiveInt('GATELOG_LOG_MAX_BYTES', env.GATELOG_LOG_MAX_BYTES, DEFAULT_LOG_MAX_BYTES),
    uploadMemoryBytes: parsePositiveInt(
      'GATELOG_UPLOAD_MEMORY_BYTES',
      env.GATELOG_UPLOAD_MEMORY_BYTES,
      512 * 1024 * 1024,
    ),
    retentionDays: parseDays('GATELOG_RETENTION_DAYS', env.GATELOG_RETENTION_DAYS),
    contentRetentionDays: parseDays('GATELOG_CONTENT_RETENTION_DAYS', env.GATELOG_CONTENT_RETENTION_DAYS),
    retentionIntervalMs: parsePositiveInt('GATELOG_RETENTION_INTERVAL_S', env.GATELOG_RETENTION_INTERVAL_S, 600) * 1000,
    workers,
    workerSlot: parseWorkerSlot(env[WORKER_SLOT_VARIABLE], workers),
  });
}

/** The primary alone: what the CLI's commands open (they read and write the primary; a replica down must not stop them). */
export function primaryOnly(target: DatabaseTarget): DatabaseTarget {
  return target.kind === 'postgres' ? { kind: 'postgres', url: target.url } : target;
}

/** The database for messages: a SQLite file's absolute path, a PostgreSQL URL without its password. */
export function describeDatabase(target: DatabaseTarget): string {
  if (target.kind === 'sqlite') {
    return target.path === ':memory:' ? 'SQLite in memory' : `SQLite ${path.resolve(target.path)}`;
  }
  const replica = target.readUrl ? ` (lists read from the replica ${describePostgresUrl(target.readUrl)})` : '';
  return `PostgreSQL ${describePostgresUrl(target.url)}${replica}`;
}

/** A PostgreSQL URL without its password (or any parameter that looks like a secret). */
export function describePostgresUrl(raw: string): string {
  const url = new URL(raw);
  if (url.password) url.password = '***';
  for (const key of [...url.searchParams.keys()]) {
    if (/pass|secret|key/i.test(key)) url.searchParams.set(key, '***');
  }
  return url.toString();
}
