/**
 * A provider's kind may have settings of its own (providers/kind.ts `options`): they are one JSON object
 * per provider, checked by the kind's schema, rather than a column of every provider per setting. Azure
 * OpenAI's api_version, the one such setting so far, moves into it.
 */
import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('providers')
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  const object = isPostgres(db)
    ? sql`json_build_object('api_version', api_version)::text`
    : sql`json_object('api_version', api_version)`;
  await sql`update providers set options = ${object} where api_version is not null`.execute(db);
  await db.schema.alterTable('providers').dropColumn('api_version').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('providers').addColumn('api_version', 'text').execute();
  const version = isPostgres(db)
    ? sql`cast(options as json) ->> 'api_version'`
    : sql`json_extract(options, '$.api_version')`;
  await sql`update providers set api_version = ${version}`.execute(db);
  await db.schema.alterTable('providers').dropColumn('options').execute();
}
