/**
 * Makes the database unavailable to a running app and brings it back. On PostgreSQL it is a real
 * outage: the test database stops accepting connections and its sessions are terminated. SQLite has no
 * server to stop, so there a Kysely plugin fails every query while the switch is down.
 */
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import pg from 'pg';
import { maintenanceUrl } from './database.js';

export class OutageSwitch implements KyselyPlugin {
  down = false;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.down)
      throw Object.assign(new Error('unable to open database file (simulated outage)'), { code: 'SQLITE_CANTOPEN' });
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

export async function setPostgresAvailable(databaseUrl: string, available: boolean): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS ${available ? 'true' : 'false'}`);
    if (!available) {
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    }
  } finally {
    await client.end();
  }
}
