/**
 * Opens the configured database for any command: connect, bring the schema up to date, and turn the
 * ways that can fail on a user's machine (a path that cannot be written, a server that does not
 * answer, a wrong password) into a ConfigError naming GATELOG_DATABASE_URL (or GATELOG_DATABASE_READ_URL,
 * for a read replica that cannot be reached): one line, no stack.
 */
import pg from 'pg';
import { ConfigError, type DatabaseTarget, describeDatabase } from '../config.js';
import { type ConnectOptions, connect, type DbHandle } from './connect.js';
import { migrateToLatest } from './migrate.js';

/** How long a first PostgreSQL connection may take before start-up gives up on the server. */
const PG_CONNECT_TIMEOUT_MS = 10_000;

export interface OpenedDatabase {
  readonly handle: DbHandle;
  /** Migrations applied by this opening. */
  readonly applied: string[];
}

export interface OpenOptions extends ConnectOptions {
  /** false: the schema is known to be up to date (a worker's primary migrated it); none is looked for. */
  migrate?: boolean;
}

export async function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Promise<OpenedDatabase> {
  if (target.kind === 'postgres') {
    await probePostgres(target.url, 'GATELOG_DATABASE_URL');
    if (target.readUrl !== undefined) await probePostgres(target.readUrl, 'GATELOG_DATABASE_READ_URL');
  }
  let handle: DbHandle;
  try {
    handle = connect(target, options);
  } catch (err) {
    throw databaseError(target, err);
  }
  try {
    return { handle, applied: options.migrate === false ? [] : await migrateToLatest(handle.db) };
  } catch (err) {
    await handle.close().catch(() => {});
    throw databaseError(target, err);
  }
}

/**
 * One connection with a time limit, so that an unreachable server fails start-up instead of hanging it;
 * `variable` names the setting holding `url`.
 */
async function probePostgres(url: string, variable: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw databaseError({ kind: 'postgres', url }, err, variable);
  } finally {
    await client.end().catch(() => {});
  }
}

function databaseError(target: DatabaseTarget, err: unknown, variable = 'GATELOG_DATABASE_URL'): Error {
  if (err instanceof ConfigError) return err;
  const e = err as NodeJS.ErrnoException & { code?: string };
  const cause = (e.message || String(err)).split('\n')[0];
  const code = typeof e.code === 'string' && !cause.includes(e.code) ? ` (${e.code})` : '';
  const verb = target.kind === 'sqlite' ? 'cannot open' : 'cannot use';
  // The server that failed, alone (a replica named beside it would say the error could be either's).
  const server: DatabaseTarget = target.kind === 'sqlite' ? target : { kind: 'postgres', url: target.url };
  return new ConfigError(variable, `${verb} ${describeDatabase(server)}: ${cause}${code}`);
}
