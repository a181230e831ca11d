/** Field names and values checked against the registry; every mismatch is a 400 naming it. */
import { AppError } from '../errors.js';
import { parseIsoTime } from '../util/iso-time.js';
import { checkSearchValues, MAX_INTEGER, MAX_VALUES_PER_FILTER } from './limits.js';
import { hasNul } from '../util/nul.js';
import {
  type FieldRegistry,
  METADATA_OPERATORS,
  OPERATORS_BY_TYPE,
  SCORE_OPERATORS,
  SEARCH_OPERATORS,
} from './registry.js';
import { type FieldType, type FilterTarget, type FilterValue, type Operator, OPERATORS } from './types.js';

export interface ResolvedField {
  target: FilterTarget;
  /** The type values are coerced to: metadata compares text (numbers for lt/gt), scores numbers. */
  type: FieldType;
  operators: readonly Operator[];
}

const invalid = (code: string, message: string, param: string | null) => new AppError(400, code, message, param);

export function resolveField(registry: FieldRegistry, name: string): ResolvedField | null {
  if (hasNul(name)) return null;
  if (registry.metadata && name.startsWith('metadata__') && name.length > 'metadata__'.length) {
    return {
      target: { kind: 'metadata', name, key: name.slice('metadata__'.length) },
      type: 'string',
      operators: METADATA_OPERATORS,
    };
  }
  if (registry.scores && name.startsWith('scores__') && name.length > 'scores__'.length) {
    return {
      target: { kind: 'score', name, evaluatorId: name.slice('scores__'.length) },
      type: 'number',
      operators: SCORE_OPERATORS,
    };
  }
  if (registry.search && name === 'search') {
    return { target: { kind: 'search', name }, type: 'string', operators: SEARCH_OPERATORS };
  }
  const def = registry.fields.get(name);
  if (!def) return null;
  return { target: { kind: 'column', name }, type: def.type, operators: OPERATORS_BY_TYPE[def.type] };
}

export function requireField(registry: FieldRegistry, name: string, param: string): ResolvedField {
  const field = resolveField(registry, name);
  if (field) return field;
  const known = [...registry.fields.keys()].join(', ');
  const maps = [
    registry.search ? 'search' : '',
    registry.metadata ? 'metadata__<key>' : '',
    registry.scores ? 'scores__<evaluator_id>' : '',
  ]
    .filter(Boolean)
    .join(', ');
  throw invalid(
    'unknown_field',
    `Unknown filter field '${name}'; filterable: ${known}${maps ? `, ${maps}` : ''}.`,
    param,
  );
}

export function checkOperator(field: ResolvedField, fieldName: string, operator: unknown, param: string): Operator {
  if (typeof operator !== 'string' || !(OPERATORS as readonly string[]).includes(operator)) {
    throw invalid(
      'invalid_operator',
      `operator ${JSON.stringify(operator)} is unknown; operators: ${OPERATORS.map((o) => `'${o}'`).join(', ')}.`,
      param,
    );
  }
  const op = operator as Operator;
  if (!field.operators.includes(op)) {
    const shown = field.target.kind === 'score' ? 'scores__<id>' : fieldName;
    throw invalid(
      'invalid_operator',
      `operator '${op}' is not allowed for ${shown}; allowed: ${field.operators.map((o) => (o === '' ? "''" : o)).join(', ')}.`,
      param,
    );
  }
  return op;
}

function coerceBoolean(value: unknown): boolean | null {
  if (value === true || value === 1 || value === 'true' || value === '1') return true;
  if (value === false || value === 0 || value === 'false' || value === '0') return false;
  return null;
}

/** Coerces one value to the field's type (docs/api.md "Filter language"); null when it does not coerce. */
function coerceScalar(type: FieldType, value: unknown): FilterValue | null {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return hasNul(value) ? null : value;
      if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value);
      if (typeof value === 'boolean') return JSON.stringify(value);
      return null;
    case 'integer': {
      const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
      return typeof n === 'number' && Number.isInteger(n) && Math.abs(n) <= MAX_INTEGER ? n : null;
    }
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      return typeof n === 'number' && Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      return coerceBoolean(value);
    case 'datetime':
      return typeof value === 'string' ? parseIsoTime(value) : null;
  }
}

/** Why a value does not coerce, in words a caller can act on. */
function describeInvalid(type: FieldType, value: unknown): string {
  const shown = JSON.stringify(value)?.slice(0, 100) ?? String(value);
  if (typeof value === 'string' && hasNul(value)) return 'values must not contain NUL characters.';
  if (type === 'integer' && typeof coerceScalar('number', value) === 'number') {
    return `${shown} is out of range; integer values lie between ${-MAX_INTEGER} and ${MAX_INTEGER}.`;
  }
  return `${shown} is not a valid ${type} value.`;
}

const RANGE: readonly Operator[] = ['lt', 'lte', 'gt', 'gte'];

/**
 * The values of one filter, coerced. `param` names the value list (e.g. "filters.cost.value").
 * `in` with one text value holding commas is split; `isnull` takes one boolean; range operators one value.
 */
export function coerceValues(field: ResolvedField, operator: Operator, raw: unknown, param: string): FilterValue[] {
  let values = Array.isArray(raw) ? raw : [raw];
  if (raw === undefined) throw invalid('invalid_value', `${param} is required.`, param);
  if (values.length === 0) throw invalid('invalid_value', `${param} must hold at least one value.`, param);
  if (operator === 'isnull') {
    const b = values.length === 1 ? coerceBoolean(values[0]) : null;
    if (b === null) throw invalid('invalid_value', `${param} must be [true] or [false] for isnull.`, param);
    return [b];
  }
  if (operator === 'in' && values.length === 1 && typeof values[0] === 'string' && values[0].includes(',')) {
    values = values[0].split(',').map((v: string) => v.trim());
  }
  if (values.length > MAX_VALUES_PER_FILTER) {
    throw invalid(
      'too_many_values',
      `${param} holds ${values.length} values; at most ${MAX_VALUES_PER_FILTER} are allowed per filter.`,
      param,
    );
  }
  const range = RANGE.includes(operator);
  if (range && values.length !== 1) {
    throw invalid('invalid_value', `${param} must hold exactly one value for '${operator}'.`, param);
  }
  // metadata compares text, except lt/gt/lte/gte which compare numbers.
  const type: FieldType = field.target.kind === 'metadata' && range ? 'number' : field.type;
  const coerced = values.map((value: unknown, index: number) => {
    const scalar = coerceScalar(type, value);
    if (scalar === null) {
      const where = values.length > 1 ? `${param}.${index}` : param;
      throw invalid('invalid_value', `${where}: ${describeInvalid(type, value)}`, where);
    }
    return scalar;
  });
  if (field.target.kind === 'search') checkSearchValues(coerced, param, Array.isArray(raw));
  return coerced;
}
