/** Body filters `{"filters": {FIELD: {"operator": OP, "value": [...]}}}` → filter leaves, ANDed (docs/api.md "Filter language"). */
import { AppError } from '../errors.js';
import type { FieldRegistry } from './registry.js';
import { checkFilterCount } from './limits.js';
import { checkOperator, coerceValues, requireField } from './resolve.js';
import type { FilterLeaf } from './types.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `at` names the filters object in errors (filters, initial_log_filters …). */
export function parseBodyFilters(registry: FieldRegistry, filters: unknown, at = 'filters'): FilterLeaf[] {
  if (filters === undefined || filters === null) return [];
  if (!isObject(filters)) throw new AppError(400, 'invalid_value', `${at} must be an object.`, at);
  checkFilterCount(Object.keys(filters).length, at);
  return Object.entries(filters).map(([name, filter]) => {
    const param = `${at}.${name}`;
    const field = requireField(registry, name, param);
    if (!isObject(filter)) {
      throw new AppError(400, 'invalid_value', `${param} must be an object {operator, value}.`, param);
    }
    const extra = Object.keys(filter).find((k) => k !== 'operator' && k !== 'value');
    if (extra !== undefined) {
      throw new AppError(
        400,
        'invalid_value',
        `${param}.${extra}: a body filter takes only operator and value (connectors are for URL filters).`,
        `${param}.${extra}`,
      );
    }
    const operator = checkOperator(field, name, filter.operator ?? '', `${param}.operator`);
    const values = coerceValues(field, operator, filter.value, `${param}.value`);
    return { kind: 'leaf', target: field.target, operator, values };
  });
}
