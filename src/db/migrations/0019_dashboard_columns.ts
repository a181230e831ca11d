/**
 * On SQLite, logs_scope_idx also covers the other columns the dashboard reads for every log of its range
 * (prompt and completion tokens, time to first token, the key's name): its totals and "Top keys" then
 * read the index, as the list and the usual summaries do, not the wide log rows that hold each call's
 * input and output (a week of a million logs: 327 → 105 ms for the tokens and time to first token, 260 →
 * 78 ms by key). The index stays one, a few bytes wider per log. PostgreSQL reads these summaries with a
 * sequential scan either way (bench/README.md), so its index is left as it is.
 */
import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';
import { SCOPE_COLUMNS } from './0003_list_indexes.js';
import { rebuildIndex } from './columns.js';

const DASHBOARD = ['prompt_tokens', 'completion_tokens', 'time_to_first_token', 'organization_key_name'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await rebuildIndex(db, 'logs_scope_idx', 'logs', [...SCOPE_COLUMNS, ...DASHBOARD]);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before the typed schema exists
export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await rebuildIndex(db, 'logs_scope_idx', 'logs', SCOPE_COLUMNS);
}
