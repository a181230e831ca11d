/** The static part of filter_options (docs/api.md "Listing logs"): display names, types and operator choices. */
import type { FieldDef, FieldRegistry } from './registry.js';
import { METADATA_OPERATORS, OPERATORS_BY_TYPE } from './registry.js';
import type { Operator } from './types.js';

export interface ValueChoice {
  name: string;
  value: string | number | boolean;
  count: number;
}

export interface FilterOption {
  display_name: string;
  metric: string;
  value_field_type: 'text' | 'number' | 'boolean' | 'datetime' | 'selection';
  operator_choices: { name: string; value: Operator }[];
  value_choices: ValueChoice[];
}

export const MAX_VALUE_CHOICES = 100;

export const OPERATOR_NAMES: Record<Operator, string> = {
  '': 'equals',
  iexact: 'equals (case-insensitive)',
  lt: 'less than',
  lte: 'less than or equal',
  gt: 'greater than',
  gte: 'greater than or equal',
  contains: 'contains',
  icontains: 'contains (case-insensitive)',
  startswith: 'starts with',
  endswith: 'ends with',
  in: 'in',
  isnull: 'is null',
  not: 'not equal',
};

const operatorChoices = (ops: readonly Operator[]) => ops.map((value) => ({ name: OPERATOR_NAMES[value], value }));

export function fieldOption(def: FieldDef, choices: ValueChoice[]): FilterOption {
  const numeric = def.type === 'integer' || def.type === 'number';
  return {
    display_name: def.displayName,
    metric: def.name,
    value_field_type: def.choices
      ? 'selection'
      : numeric
        ? 'number'
        : def.type === 'string'
          ? 'text'
          : (def.type as 'boolean' | 'datetime'),
    operator_choices: operatorChoices(OPERATORS_BY_TYPE[def.type]),
    value_choices: numeric && !def.choices ? [] : choices,
  };
}

export function metadataOption(key: string, choices: ValueChoice[]): FilterOption {
  return {
    display_name: `Metadata: ${key}`,
    metric: `metadata__${key}`,
    value_field_type: 'selection',
    operator_choices: operatorChoices(METADATA_OPERATORS),
    value_choices: choices,
  };
}

export const optionFields = (registry: FieldRegistry) => [...registry.fields.values()].filter((f) => f.option);
