/** What `gatelog --help`, `gatelog COMMAND --help` and `gatelog --version` print. */
import fs from 'node:fs';
import { BUILT_IN_PROVIDER_KINDS } from './providers/registry.js';
import { SETTINGS } from './settings.js';

/** A kind's option as a flag of `providers set`: `api_version` is `--api-version`. */
export const optionFlag = (field: string) => field.replace(/_/g, '-');

/** `providers set`'s help: its kinds and their options are the registry's. */
function providersHelp(): string {
  const kinds = BUILT_IN_PROVIDER_KINDS.kinds.map((k) => `${k.name} (${k.label})`);
  const options = [...BUILT_IN_PROVIDER_KINDS.optionFields].map(([field, { schema, kinds: whose }]) => {
    const { title, description } = schema.meta() ?? {};
    return {
      flag: `--${optionFlag(field)}`,
      text: `${description ?? title ?? field} (${whose.map((k) => k.name).join(', ')} only)`,
    };
  });
  const width = Math.max('--api-key'.length, ...options.map((o) => o.flag.length));
  const line = (flag: string, text: string) => `  ${flag.padEnd(width)}  ${text}`;
  return `usage: gatelog providers set PROVIDER --org ORG --api-key K [--base-url URL] [--kind KIND]
         [--models M1,M2*] ${options.map((o) => `[${o.flag} V] `).join('')}[--key-id ID] [--weight W] [--json]
       gatelog providers list --org ORG [--json]

Stores the organization's key for a model provider (encrypted with the secret key); proxied calls of
that organization use it.
${[
  line('--base-url', 'where its calls go: an OpenAI-compatible server, or an Azure OpenAI resource'),
  line('--kind', `${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}; known names imply theirs`),
  line('--models', 'the models it serves, names or prefix* patterns, comma-separated'),
  ...options.map((o) => line(o.flag, o.text)),
  line('--key-id', 'one of several keys of the provider (default: "default")'),
  line('--weight', "that key's share of the calls among the provider's keys (default 1)"),
].join('\n')}`;
}

export const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: `usage: gatelog serve [--workers N]

Brings the database's schema up to date, then serves HTTP on GATELOG_HOST:GATELOG_PORT until SIGTERM or
SIGINT. Its first log line names the address, the database, the upstream and where the secret key is.

--workers N  processes serving the port (GATELOG_WORKERS; default: one per core, one for :memory:).
             With N > 1 the process started supervises N workers: it migrates the database, starts
             them, logs the first line once all listen, starts another when one dies (pausing longer
             each time one dies soon after it started), and on SIGTERM or SIGINT stops them all, each
             finishing its calls in flight and writing its queued logs. Budgets, rate limits, the
             response cache and live tails hold across workers as across nodes; --workers 1 is one
             process.`,
  migrate: `usage: gatelog migrate [--json]

Applies the database migrations that are not applied yet, then exits. serve and every other command do
this too; run it alone to upgrade a database before starting a new version.`,
  orgs: `usage: gatelog orgs create NAME [--json]
       gatelog orgs list [--json]

Organizations own API keys, provider credentials and logs; a key sees only its organization's data.`,
  keys: `usage: gatelog keys create --org ORG --name NAME [--test] [--email E --first-name F --last-name L]
                          [--scopes S,S] [--allow-model M]... [--expires WHEN] [--rpm N] [--tpm N] [--json]
       gatelog keys list --org ORG [--json]
       gatelog keys revoke KEY_ID [--json]

create prints the key once (gatelog keeps only its hash). ORG is an organization's id or name. --test
makes a test key: its logs are in environment "test" and lists show them only with all_envs=true or
is_test. --email/--first-name/--last-name name the key's owner, shown on its logs as user.
--scopes: what the key may do, of models (proxied model calls), ingest (logging API, traces), read
(lists, search, analytics, export, datasets) and admin (keys, provider keys, settings); default all four,
a test key never admin. --allow-model: a model it may call (a name, prefix* or provider/*; repeat it or
separate with commas); default any. --expires: an ISO 8601 time or 30d / 12h from now. --rpm / --tpm:
the most requests / tokens (prompt and output) the key may send a minute; default no limit. list shows
them as rpm=N tpm=N. The same settings are on POST /api/keys/ (docs/api.md "Keys", "Rate limits").`,
  db: `usage: gatelog db vacuum [--json]

Compacts the database. On SQLite it rewrites the file without the space deleted logs left and switches
an older file to incremental auto-vacuum, so that the retention sweep shrinks it from then on (new files
start that way); it needs free disk space about the file's size and blocks writers while it runs. On
PostgreSQL it runs VACUUM (ANALYZE).`,
  providers: providersHelp(),
};

export function usage(): string {
  const width = Math.max(...SETTINGS.map((s) => s.name.length));
  const settings = SETTINGS.map((s) => `  ${s.name.padEnd(width)}  ${s.help} (default: ${s.default})`);
  return `usage: gatelog <command> [options]

Commands:
  serve [--workers N]           migrate the database, then serve HTTP (N processes; default one per core)
  migrate                       apply migrations and exit
  orgs create NAME | orgs list
  keys create --org ORG --name NAME [--test] [--email E --first-name F --last-name L]
              [--scopes S,S] [--allow-model M]... [--expires WHEN] [--rpm N] [--tpm N]
  keys list --org ORG | keys revoke KEY_ID
  providers set PROVIDER --org ORG --api-key K [--base-url URL] [--kind …] (see providers --help)
  providers list --org ORG
  db vacuum                     compact the database (SQLite: and shrink it as logs expire)

Every command takes --json (one JSON object on stdout) and --help. gatelog --version prints the version.

Every command, serve included, reads its settings from these environment variables, so the CLI works
on the database the server uses only when both see the same values:
${settings.join('\n')}`;
}

export function version(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
