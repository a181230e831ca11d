/**
 * URL quick filters (docs/api.md "URL quick filters"): `?F=V` or `?F[value]=V&F[operator]=OP&F[connector]=C`.
 * Filters are taken in order of first appearance and folded left to right: (((f1 C2 f2) C3 f3) …).
 */
import { AppError } from '../errors.js';
import { checkFilterCount } from './limits.js';
import type { FieldRegistry } from './registry.js';
import { checkOperator, coerceValues, resolveField } from './resolve.js';
import type { FilterLeaf, FilterNode } from './types.js';

interface RawUrlFilter {
  name: string;
  value?: string;
  operator?: string;
  connector?: string;
  plain: boolean;
}

const PART = /^(.+)\[(value|operator|connector)\]$/;

export interface UrlFilters {
  /** The folded expression, or null when the URL has no filters. */
  node: FilterNode | null;
  /** Resolved names of the fields the URL filters (body filters on them are dropped). */
  fields: Set<string>;
  /**
   * The names that are neither a field nor `metadata__<key>`/`scores__<id>` and were read as
   * `metadata__<name>` (a typo such as `modle` filters metadata and matches nothing), as written.
   */
  readAsMetadata: string[];
}

function collect(registry: FieldRegistry, search: URLSearchParams): RawUrlFilter[] {
  const byName = new Map<string, RawUrlFilter>();
  for (const [key, value] of search) {
    const match = PART.exec(key);
    const name = match ? match[1] : key;
    if (registry.reservedParams.has(name)) continue;
    let entry = byName.get(name);
    if (!entry) {
      entry = { name, plain: false };
      byName.set(name, entry);
    }
    const part = match ? (match[2] as 'value' | 'operator' | 'connector') : 'value';
    const repeated = part === 'value' ? entry.value !== undefined : entry[part] !== undefined;
    if (repeated) {
      throw new AppError(
        400,
        'invalid_parameter',
        `${name} is given more than once; URL filters take one value per field (use body filters for lists).`,
        name,
      );
    }
    if (part === 'value') entry.plain = !match;
    entry[part] = value;
  }
  return [...byName.values()];
}

export function parseUrlFilters(registry: FieldRegistry, search: URLSearchParams): UrlFilters {
  const fields = new Set<string>();
  const readAsMetadata: string[] = [];
  let node: FilterNode | null = null;
  const collected = collect(registry, search);
  checkFilterCount(collected.length, 'filters');
  for (const raw of collected) {
    if (raw.value === undefined) {
      throw new AppError(400, 'invalid_parameter', `${raw.name}[value] is required.`, `${raw.name}[value]`);
    }
    let field = resolveField(registry, raw.name);
    if (!field && registry.metadata) {
      field = resolveField(registry, `metadata__${raw.name}`);
      if (field) readAsMetadata.push(raw.name);
    }
    if (!field) throw new AppError(400, 'unknown_field', `Unknown filter field '${raw.name}'.`, raw.name);
    const operator = raw.operator ?? '';
    if (operator !== '' && operator !== 'not') {
      throw new AppError(
        400,
        'invalid_operator',
        `URL filters take operator '' or not; for '${operator}' use body filters.`,
        `${raw.name}[operator]`,
      );
    }
    const op = checkOperator(field, raw.name, operator, `${raw.name}[operator]`);
    const connector = (raw.connector ?? 'AND').toUpperCase();
    if (connector !== 'AND' && connector !== 'OR') {
      throw new AppError(
        400,
        'invalid_parameter',
        `${raw.name}[connector] must be AND or OR.`,
        `${raw.name}[connector]`,
      );
    }
    const leaf: FilterLeaf = {
      kind: 'leaf',
      target: field.target,
      operator: op,
      values: coerceValues(field, op, raw.value, raw.plain ? raw.name : `${raw.name}[value]`),
    };
    fields.add(field.target.name);
    node = node === null ? leaf : { kind: connector === 'OR' ? 'or' : 'and', children: [node, leaf] };
  }
  return { node, fields, readAsMetadata };
}
