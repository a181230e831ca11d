/** Evaluators and scores: validation and response shapes (docs/api.md "Evaluators and scores"). */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database, EvaluatorsTable } from '../db/schema.js';
import { AppError } from '../errors.js';
import {
  type EvaluatorView,
  findEvaluator,
  insertEvaluator,
  insertScore,
  toEvaluatorView,
  updateEvaluator,
} from './repository.js';

const SLUG = /^[a-z0-9][a-z0-9_-]*$/;
const slugSchema = z.string().max(120).regex(SLUG, 'must be lowercase letters, digits, _ or -');

export const CreateEvaluator = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(200),
  evaluator_slug: slugSchema.optional(),
  type: z.enum(['human', 'llm', 'code']).default('human'),
  score_value_type: z.enum(['numerical', 'boolean']).default('numerical'),
  description: z.string().max(10_000).default(''),
});

export const PatchEvaluator = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
    evaluator_slug: slugSchema.optional(),
    type: z.enum(['human', 'llm', 'code']).optional(),
    description: z.string().max(10_000).optional(),
  })
  .strict();

/** "Answer Relevance!" → "answer_relevance". */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return slug || 'evaluator';
}

export async function createEvaluator(
  db: Kysely<Database>,
  organizationId: string,
  input: z.output<typeof CreateEvaluator>,
) {
  const now = Date.now();
  const row: EvaluatorsTable = {
    id: crypto.randomUUID(),
    organization_id: organizationId,
    name: input.name,
    evaluator_slug: input.evaluator_slug ?? slugify(input.name),
    type: input.type,
    score_value_type: input.score_value_type,
    description: input.description,
    created_at: now,
    updated_at: now,
  };
  await insertEvaluator(db, row);
  return toEvaluatorView(row);
}

export async function patchEvaluator(
  db: Kysely<Database>,
  row: EvaluatorsTable,
  changes: z.output<typeof PatchEvaluator>,
): Promise<EvaluatorView> {
  return toEvaluatorView(await updateEvaluator(db, row, changes));
}

export const CreateScore = z.object({
  evaluator_id: z.string().min(1).optional(),
  evaluator_slug: z.string().min(1).optional(),
  numerical_value: z.number().finite().nullish(),
  boolean_value: z.boolean().nullish(),
});

export interface ScoreTarget {
  /** A request log (scores) or a dataset log (dataset_log_scores). */
  table: 'scores' | 'dataset_log_scores';
  organizationId: string;
  logId: number;
}

/** Validates a score body against its evaluator and stores it; one score per evaluator per log. */
export async function createScore(db: Kysely<Database>, target: ScoreTarget, input: z.output<typeof CreateScore>) {
  if (input.evaluator_id === undefined && input.evaluator_slug === undefined) {
    throw new AppError(400, 'invalid_value', 'Give evaluator_id or evaluator_slug.', 'evaluator_id');
  }
  const evaluator = await findEvaluator(db, target.organizationId, {
    id: input.evaluator_id,
    slug: input.evaluator_slug,
  });
  if (!evaluator) {
    const param = input.evaluator_id !== undefined ? 'evaluator_id' : 'evaluator_slug';
    throw new AppError(404, 'not_found', `No evaluator matches ${param} '${input[param]}'.`, param);
  }
  // A boolean evaluator takes boolean_value alone, a numerical one numerical_value alone.
  const kind = evaluator.score_value_type === 'boolean' ? 'boolean' : 'numerical';
  const given = { boolean_value: input.boolean_value ?? null, numerical_value: input.numerical_value ?? null };
  const takes = kind === 'boolean' ? 'boolean_value' : 'numerical_value';
  const other = kind === 'boolean' ? 'numerical_value' : 'boolean_value';
  const value = given[takes];
  if (value === null) {
    throw new AppError(400, 'invalid_value', `Evaluator '${evaluator.evaluator_slug}' takes ${takes}.`, takes);
  }
  if (given[other] !== null) {
    throw new AppError(400, 'invalid_value', `A ${kind} evaluator takes no ${other}.`, other);
  }
  const scoreValue = typeof value === 'boolean' ? (value ? 1 : 0) : value;
  const row = await insertScore(db, {
    table: target.table,
    organizationId: target.organizationId,
    logId: target.logId,
    evaluatorId: evaluator.id,
    numericalValue: given.numerical_value,
    booleanValue: given.boolean_value,
    scoreValue,
  });
  return { row, evaluatorSlug: evaluator.evaluator_slug };
}
