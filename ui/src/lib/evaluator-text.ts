/** How an evaluator reads to a person scoring with it: what values it takes, and who it is meant for. Pure. */

/** What of an evaluator (api.ts's Evaluator) these read; kept here so that the lib stays free of the DOM. */
interface EvaluatorKind {
  type: 'human' | 'llm' | 'code';
  score_value_type: 'numerical' | 'boolean';
}

/** Who scores with an evaluator of each type (docs/api.md "Evaluators and scores"). */
export const EVALUATOR_TYPES: Record<EvaluatorKind['type'], string> = {
  human: 'human (scored by a person)',
  llm: 'llm (scored by a model)',
  code: 'code (scored by a program)',
};

/**
 * The values a score takes: a numerical evaluator any finite number (gatelog sets no bounds; its
 * description may give the scale), a boolean one yes or no, stored as 1 or 0.
 */
export const scoreRange = (e: Pick<EvaluatorKind, 'score_value_type'>): string =>
  e.score_value_type === 'boolean' ? 'yes or no (stored as 1 or 0)' : 'any number';

/** "numerical · any number · human evaluator": the line under a score field. */
export const scoreHint = (e: EvaluatorKind): string => `${e.score_value_type} · ${scoreRange(e)} · ${e.type} evaluator`;
