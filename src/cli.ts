/**
 * The `gatelog` command (`gatelog --help`). With --json every command prints exactly one JSON object on
 * stdout; errors go to stderr, as one line, with exit status 1.
 */
import { COMMAND_HELP, usage, version } from './cli-help.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/open.js';
import { serve } from './server.js';
import { announceDatabase, CliError, print } from './cli-output.js';

export async function runCli(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  const [command, ...rest] = argv.filter((a) => a !== '--json');
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      process.stdout.write(`${usage()}\n`);
      return;
    }
    if (command === '--version' || command === '-v' || command === 'version') {
      print(json, { version: version() }, version());
      return;
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      const help = Object.hasOwn(COMMAND_HELP, command) ? COMMAND_HELP[command] : undefined;
      if (!help) throw new CliError(`unknown command '${command}'; run 'gatelog --help'`);
      process.stdout.write(`${help}\n`);
      return;
    }
    if (command === 'serve') {
      if (rest.length > 0) throw new CliError(`'gatelog serve' takes no arguments, got '${rest[0]}'`);
      await serve(loadConfig());
      return;
    }
    if (command === 'migrate') {
      if (rest.length > 0) throw new CliError(`'gatelog migrate' takes no arguments, got '${rest[0]}'`);
      const config = loadConfig();
      announceDatabase(config);
      const { handle, applied } = await openDatabase(config.database);
      await handle.close();
      print(json, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
      return;
    }
    const { runAdminCommand } = await import('./cli-admin.js');
    await runAdminCommand(command, rest, json);
  } catch (err) {
    if (err instanceof CliError || err instanceof ConfigError) {
      process.stderr.write(`gatelog: ${err.message}\n`);
      // A server that failed to start may hold a worker thread or a pool: it exits anyway.
      if (command === 'serve') process.exit(1);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}
