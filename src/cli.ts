/**
 * The `gatelog` command (CONTRACT §1). With --json every command prints exactly one JSON object on
 * stdout; errors go to stderr with exit status 1.
 */
import { ConfigError, loadConfig } from './config.js';
import { connect } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { serve } from './server.js';

export class CliError extends Error {}

const USAGE = `usage: gatelog <command> [options]

  serve                         migrate the database, then serve HTTP
  migrate                       apply migrations and exit
  orgs create NAME | orgs list
  keys create --org ORG --name NAME [--test] [--email E --first-name F --last-name L]
  keys list --org ORG | keys revoke KEY_ID
  providers set PROVIDER --org ORG --api-key K [--base-url URL] | providers list --org ORG

Every command takes --json.`;

export async function runCli(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  try {
    const [command, ...rest] = argv.filter((a) => a !== '--json');
    if (command === 'serve') {
      await serve(loadConfig());
      return;
    }
    if (command === 'migrate') {
      const config = loadConfig();
      const handle = connect(config.database);
      try {
        const applied = await migrateToLatest(handle.db);
        print(json, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
      } finally {
        await handle.close();
      }
      return;
    }
    if (command === undefined || command === 'help' || command === '--help') {
      process.stdout.write(`${USAGE}\n`);
      return;
    }
    const { runAdminCommand } = await import('./cli-admin.js');
    await runAdminCommand(command, rest, json);
  } catch (err) {
    if (err instanceof CliError || err instanceof ConfigError) {
      process.stderr.write(`gatelog: ${err.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}

export function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}
