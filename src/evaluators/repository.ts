/** Evaluators and log scores (docs/api.md "Evaluators and scores"), scoped by organization. */
import crypto from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { isForeignKeyViolation, isPostgres, isUniqueViolation } from '../db/dialect.js';
import type { Database, EvaluatorsTable, ScoresTable } from '../db/schema.js';
import { AppError, conflict, notFound } from '../errors.js';

export interface EvaluatorView {
  id: string;
  name: string;
  evaluator_slug: string;
  type: 'human' | 'llm' | 'code';
  score_value_type: 'numerical' | 'boolean';
  description: string;
  created_at: string;
  updated_at: string;
}

export const toEvaluatorView = (row: EvaluatorsTable): EvaluatorView => ({
  id: row.id,
  name: row.name,
  evaluator_slug: row.evaluator_slug,
  // Stored only through the evaluator schemas, which allow these values alone.
  type: row.type as EvaluatorView['type'],
  score_value_type: row.score_value_type as EvaluatorView['score_value_type'],
  description: row.description,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

const duplicateSlug = (slug: string) =>
  conflict('duplicate_slug', `An evaluator with slug '${slug}' already exists.`, 'evaluator_slug');

export async function insertEvaluator(db: Kysely<Database>, row: EvaluatorsTable): Promise<void> {
  try {
    await db.insertInto('evaluators').values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateSlug(row.evaluator_slug);
    throw err;
  }
}

export async function updateEvaluator(
  db: Kysely<Database>,
  row: EvaluatorsTable,
  changes: Partial<Pick<EvaluatorsTable, 'name' | 'evaluator_slug' | 'type' | 'description'>>,
): Promise<EvaluatorsTable> {
  const next = { ...row, ...changes, updated_at: Date.now() };
  try {
    await db.updateTable('evaluators').set(next).where('id', '=', row.id).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateSlug(next.evaluator_slug);
    throw err;
  }
  return next;
}

export async function findEvaluator(
  db: Kysely<Database>,
  organizationId: string,
  by: { id?: string; slug?: string },
): Promise<EvaluatorsTable | null> {
  let query = db.selectFrom('evaluators').selectAll().where('organization_id', '=', organizationId);
  if (by.id !== undefined) query = query.where('id', '=', by.id);
  if (by.slug !== undefined) query = query.where('evaluator_slug', '=', by.slug);
  return (await query.executeTakeFirst()) ?? null;
}

export async function requireEvaluator(db: Kysely<Database>, organizationId: string, id: string) {
  const row = await findEvaluator(db, organizationId, { id });
  if (!row) throw notFound(`No evaluator with id '${id}'.`);
  return row;
}

export async function listEvaluators(db: Kysely<Database>, organizationId: string, limit: number, offset: number) {
  const base = db.selectFrom('evaluators').where('organization_id', '=', organizationId);
  const { count } = await base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  const rows = await base.selectAll().orderBy('created_at').orderBy('id').limit(limit).offset(offset).execute();
  return { count: Number(count), rows };
}

export async function deleteEvaluator(db: Kysely<Database>, id: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('scores').where('evaluator_id', '=', id).execute();
    await trx.deleteFrom('evaluators').where('id', '=', id).execute();
  });
}

export interface NewScore {
  /** scores for request logs, dataset_log_scores for dataset logs. */
  table: 'scores' | 'dataset_log_scores';
  organizationId: string;
  logId: number;
  evaluatorId: string;
  numericalValue: number | null;
  booleanValue: boolean | null;
  scoreValue: number;
}

export async function insertScore(db: Kysely<Database>, score: NewScore): Promise<ScoresTable> {
  const row: ScoresTable = {
    id: crypto.randomUUID(),
    organization_id: score.organizationId,
    log_id: score.logId,
    evaluator_id: score.evaluatorId,
    numerical_value: score.numericalValue,
    boolean_value: score.booleanValue === null ? null : score.booleanValue ? 1 : 0,
    score_value: score.scoreValue,
    created_at: Date.now(),
  };
  try {
    if (score.table === 'scores' && isPostgres(db)) {
      // PostgreSQL's partitioned logs have no foreign key pointing at them: the log is locked as the key
      // would (a deletion waits for this insert, then its trigger takes the score), or found gone.
      await db.transaction().execute(async (trx) => {
        const held = await sql`select 1 from logs where id = ${score.logId} for key share`.execute(trx);
        if (held.rows.length === 0) throw notFound('Not found: the log or the evaluator was just deleted.');
        await trx.insertInto('scores').values(row).execute();
      });
    } else await db.insertInto(score.table).values(row).execute();
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (isUniqueViolation(err)) {
      throw new AppError(409, 'duplicate_score', 'This log already has a score from this evaluator.', 'evaluator_id');
    }
    // Found a moment ago, deleted by a concurrent request since (the log, or the evaluator).
    if (isForeignKeyViolation(err)) throw notFound('Not found: the log or the evaluator was just deleted.');
    throw err;
  }
  return row;
}

export async function scoresOfLog(db: Kysely<Database>, logId: number) {
  return db
    .selectFrom('scores')
    .innerJoin('evaluators', 'evaluators.id', 'scores.evaluator_id')
    .selectAll('scores')
    .select('evaluators.evaluator_slug')
    .where('scores.log_id', '=', logId)
    .orderBy('scores.created_at')
    .execute();
}

/** Deletes a score of a log; false when the log has no score with that id. */
export async function deleteScore(db: Kysely<Database>, logId: number, scoreId: string): Promise<boolean> {
  const result = await db.deleteFrom('scores').where('id', '=', scoreId).where('log_id', '=', logId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
