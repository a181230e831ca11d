/**
 * The `gatelog` command (`gatelog --help`). With --json every command prints exactly one JSON object on
 * stdout; errors go to stderr, as one line, with exit status 1.
 */
import cluster from 'node:cluster';
import { COMMAND_HELP, usage, version } from './cli-help.js';
import { type Config, ConfigError, loadConfig, parseWorkers, primaryOnly } from './config.js';
import { openDatabase } from './db/open.js';
import { announceDatabase, CliError, print } from './cli-output.js';
import { reportStartFailure } from './cluster/worker-link.js';

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
      const config = serveConfig(rest);
      // One process serves, or a primary supervises workers that do (each of them runs this again).
      if (config.workers > 1 && cluster.isPrimary) {
        const { superviseWorkers } = await import('./cluster/primary.js');
        await superviseWorkers(config);
      } else {
        const { serve } = await import('./server.js');
        await serve(config);
      }
      return;
    }
    if (command === 'migrate') {
      if (rest.length > 0) throw new CliError(`'gatelog migrate' takes no arguments, got '${rest[0]}'`);
      const config = loadConfig();
      announceDatabase(config);
      const { handle, applied } = await openDatabase(primaryOnly(config.database));
      await handle.close();
      print(json, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
      return;
    }
    const { runAdminCommand } = await import('./cli-admin.js');
    await runAdminCommand(command, rest, json);
  } catch (err) {
    if (err instanceof CliError || err instanceof ConfigError) {
      // A worker that cannot start tells its primary, which says it once for every worker.
      if (!(command === 'serve' && (await reportStartFailure(err.message)))) {
        process.stderr.write(`gatelog: ${err.message}\n`);
      }
      // A server that failed to start may hold a worker thread or a pool: it exits anyway.
      if (command === 'serve') process.exit(1);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}

/** `serve [--workers N]`: the settings, with --workers (or --workers=N) in place of GATELOG_WORKERS. */
function serveConfig(args: string[]): Config {
  let workers: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--workers' && i + 1 < args.length) workers = args[++i];
    else if (arg.startsWith('--workers=')) workers = arg.slice('--workers='.length);
    else if (arg === '--workers') throw new CliError("'--workers' needs a number: gatelog serve --workers N");
    else throw new CliError(`'gatelog serve' takes only --workers N, got '${arg}'`);
  }
  const config = loadConfig();
  if (workers === undefined) return config;
  return Object.freeze({ ...config, workers: parseWorkers('--workers', workers, config.database) });
}
