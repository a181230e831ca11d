/** Administrative CLI commands: organizations, API keys and provider credentials (`gatelog --help`). */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { createApiKey, listApiKeys, revokeApiKey } from './auth/api-keys.js';
import { type RateLimits, rateLimitsView } from './auth/key-controls.js';
import { createOrganization, findOrganization, listOrganizations } from './auth/organizations.js';
import { resolveSecretKey } from './auth/secret-key.js';
import { optionFlag } from './cli-help.js';
import { KEY_CONTROL_OPTIONS, keyControlsFrom } from './cli-key-options.js';
import { announceDatabase, CliError, print } from './cli-output.js';
import { assertUpstreamAllowed } from './gateway/core/credential.js';
import { loadConfig, primaryOnly } from './config.js';
import { isPostgres } from './db/dialect.js';
import { openDatabase } from './db/open.js';
import type { Database } from './db/schema.js';
import { AppError } from './errors.js';
import { listProviderKeys, type ProviderView, setProviderKey } from './providers/credentials.js';
import { BUILT_IN_PROVIDER_KINDS } from './providers/registry.js';

type Options = NonNullable<ParseArgsConfig['options']>;

function parse(args: string[], options: Options, positionals: number) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw new CliError(
      `expected ${positionals} argument${positionals === 1 ? '' : 's'}, got ${parsed.positionals.length}`,
    );
  }
  return parsed as { values: Record<string, string | boolean | undefined>; positionals: string[] };
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new CliError(`--${name} is required`);
  return value;
}

async function orgOf(db: Kysely<Database>, values: Record<string, string | boolean | undefined>) {
  const ref = required(values, 'org');
  const org = await findOrganization(db, ref);
  if (!org) throw new CliError(`no organization with id or name '${ref}'`);
  return org;
}

type Handler = (db: Kysely<Database>, args: string[], json: boolean) => Promise<void>;

const commands: Record<string, Record<string, Handler>> = {
  db: {
    vacuum: async (db, args, json) => {
      parse(args, {}, 0);
      const started = Date.now();
      if (isPostgres(db)) {
        await sql`vacuum (analyze)`.execute(db);
      } else {
        // Incremental auto-vacuum from now on (the retention sweep then gives pages back as it deletes);
        // an existing file takes the mode only through a VACUUM, which also compacts it now.
        await sql`pragma auto_vacuum = incremental`.execute(db);
        await sql`vacuum`.execute(db);
      }
      const seconds = (Date.now() - started) / 1000;
      print(json, { vacuumed: true, seconds }, `vacuumed in ${seconds.toFixed(1)} s`);
    },
  },
  orgs: {
    create: async (db, args, json) => {
      const { positionals } = parse(args, {}, 1);
      const org = await createOrganization(db, positionals[0]);
      print(json, { id: org.id, name: org.name }, org.id);
    },
    list: async (db, args, json) => {
      parse(args, {}, 0);
      const orgs = await listOrganizations(db);
      print(json, { results: orgs }, orgs.map((o) => `${o.id}\t${o.name}`).join('\n'));
    },
  },
  keys: {
    create: async (db, args, json) => {
      const { values } = parse(
        args,
        {
          org: { type: 'string' },
          name: { type: 'string' },
          test: { type: 'boolean' },
          email: { type: 'string' },
          'first-name': { type: 'string' },
          'last-name': { type: 'string' },
          ...KEY_CONTROL_OPTIONS,
        },
        0,
      );
      const org = await orgOf(db, values);
      const controls = keyControlsFrom(values);
      const created = await createApiKey(db, {
        organizationId: org.id,
        name: required(values, 'name'),
        isTest: values.test === true,
        owner: {
          email: (values.email as string | undefined) ?? '',
          first_name: (values['first-name'] as string | undefined) ?? '',
          last_name: (values['last-name'] as string | undefined) ?? '',
        },
        controls,
      });
      const { organization_id, rate_limits, ...key } = created;
      print(json, { ...key, rate_limits: rateLimitsView(rate_limits), organization_id }, key.key);
    },
    list: async (db, args, json) => {
      const { values } = parse(args, { org: { type: 'string' } }, 0);
      const keys = await listApiKeys(db, (await orgOf(db, values)).id);
      const text = keys.map((k) =>
        [
          k.id,
          k.name,
          `${k.prefix}…`,
          k.is_test ? 'test' : 'live',
          k.scopes.join(','),
          ...limitsText(k.rate_limits),
          ...(k.revoked_at ? ['revoked'] : []),
        ].join('\t'),
      );
      print(
        json,
        { results: keys.map((k) => ({ ...k, rate_limits: rateLimitsView(k.rate_limits) })) },
        text.join('\n'),
      );
    },
    revoke: async (db, args, json) => {
      const { positionals } = parse(args, {}, 1);
      if (!(await revokeApiKey(db, positionals[0]))) throw new CliError(`no API key with id '${positionals[0]}'`);
      print(json, { id: positionals[0], revoked: true }, `revoked ${positionals[0]}`);
    },
  },
  providers: {
    set: async (db, args, json) => {
      const { values, positionals } = parse(
        args,
        {
          org: { type: 'string' },
          'api-key': { type: 'string' },
          'base-url': { type: 'string' },
          kind: { type: 'string' },
          models: { type: 'string' },
          ...Object.fromEntries(
            [...BUILT_IN_PROVIDER_KINDS.optionFields.keys()].map((f) => [optionFlag(f), { type: 'string' as const }]),
          ),
          'key-id': { type: 'string' },
          weight: { type: 'string' },
        },
        1,
      );
      const org = await orgOf(db, values);
      const baseUrl = (values['base-url'] as string | undefined) ?? null;
      if (baseUrl !== null && !/^https?:\/\/[^/]/i.test(baseUrl))
        throw new CliError('--base-url must be an http(s) URL');
      const config = loadConfig();
      if (baseUrl !== null) {
        try {
          assertUpstreamAllowed(config, baseUrl, null);
        } catch (err) {
          throw new CliError((err as Error).message);
        }
      }
      const models = values.models as string | undefined;
      const weight = values.weight as string | undefined;
      if (weight !== undefined && !/^\d+(\.\d+)?$/.test(weight)) throw new CliError('--weight must be a number');
      const options = Object.fromEntries(
        [...BUILT_IN_PROVIDER_KINDS.optionFields.keys()].map((f) => [f, values[optionFlag(f)] ?? null]),
      );
      let view;
      try {
        view = await setProviderKey(
          db,
          resolveSecretKey(config),
          {
            organizationId: org.id,
            provider: positionals[0],
            apiKey: required(values, 'api-key'),
            baseUrl: baseUrl?.replace(/\/+$/, '') ?? null,
            kind: (values.kind as string | undefined) ?? null,
            models:
              models === undefined
                ? null
                : models
                    .split(',')
                    .map((m) => m.trim())
                    .filter(Boolean),
            options,
            keyId: (values['key-id'] as string | undefined) ?? null,
            weight: weight === undefined ? null : Number(weight),
          },
          BUILT_IN_PROVIDER_KINDS,
        );
      } catch (err) {
        if (err instanceof AppError) throw new CliError(`--${optionFlag(err.param ?? 'provider')}: ${err.message}`);
        throw err;
      }
      print(json, view, providerLine(view));
    },
    list: async (db, args, json) => {
      const { values } = parse(args, { org: { type: 'string' } }, 0);
      const keys = await listProviderKeys(db, (await orgOf(db, values)).id, BUILT_IN_PROVIDER_KINDS);
      const text = keys.map(providerLine);
      print(json, { results: keys.map(({ rate_limits: _notYetEnforced, ...k }) => k) }, text.join('\n'));
    },
  },
};

/** A key's limits as a column of `keys list` ("rpm=60 tpm=100000"); none when it has none. */
function limitsText(limits: RateLimits): string[] {
  const set = [
    limits.requests_per_minute === undefined ? '' : `rpm=${limits.requests_per_minute}`,
    limits.tokens_per_minute === undefined ? '' : `tpm=${limits.tokens_per_minute}`,
  ].filter(Boolean);
  return set.length === 0 ? [] : [set.join(' ')];
}

/** One provider on one line: name, kind, its keys' previews (with weights when several), base URL, models. */
function providerLine(p: ProviderView): string {
  const keys =
    p.keys.length === 1
      ? p.api_key_preview
      : p.keys.map((k) => `${k.key_id}:${k.api_key_preview}×${k.weight}`).join(',');
  return [p.provider, p.kind, keys, p.base_url ?? '(default)', p.models?.join(',') ?? ''].join('\t').trimEnd();
}

export async function runAdminCommand(command: string, args: string[], json: boolean): Promise<void> {
  // Own properties only: `gatelog constructor` must not find Object.prototype's.
  const group = Object.hasOwn(commands, command) ? commands[command] : undefined;
  if (!group) throw new CliError(`unknown command '${command}'; run 'gatelog --help'`);
  const [sub, ...rest] = args;
  const handler = sub === undefined || !Object.hasOwn(group, sub) ? undefined : group[sub];
  if (!handler) throw new CliError(`'gatelog ${command}' needs one of: ${Object.keys(group).join(', ')}`);
  const config = loadConfig();
  announceDatabase(config);
  // Admin commands work on a fresh install too: opening brings the schema up to date.
  const { handle } = await openDatabase(primaryOnly(config.database));
  const { db } = handle;
  try {
    await handler(db, rest, json);
  } catch (err) {
    if (err instanceof AppError) throw new CliError(err.message);
    throw err;
  } finally {
    await handle.close();
  }
}
