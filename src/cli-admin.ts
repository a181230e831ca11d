/** Administrative CLI commands: organizations, API keys, provider credentials. */
import { CliError } from './cli.js';

export async function runAdminCommand(command: string, _args: string[], _json: boolean): Promise<void> {
  throw new CliError(`unknown command '${command}'; run 'gatelog help'`);
}
