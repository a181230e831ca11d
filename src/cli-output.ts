/** What every `gatelog` command shares: its error, its one line on stderr, its output (cli.ts, cli-admin.ts). */
import { type Config, describeDatabase, primaryOnly } from './config.js';

/** A command's failure: printed as one line on stderr, exit status 1. */
export class CliError extends Error {}

/** On stderr, so that --json output stays one object: which database a command works on (the primary). */
export function announceDatabase(config: Config): void {
  const note = config.database.kind === 'sqlite' && config.database.isDefault ? ' (GATELOG_DATABASE_URL unset)' : '';
  process.stderr.write(`gatelog: database ${describeDatabase(primaryOnly(config.database))}${note}\n`);
}

export function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}
