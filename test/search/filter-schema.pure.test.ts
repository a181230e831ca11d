/**
 * The filter-language schema of the OpenAPI document and the body parser that enforces the language
 * are built from one registry: for every field and operator they must agree on what is accepted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBodyFilters } from '../../src/filters/parse-body.js';
import { LOG_FIELDS } from '../../src/filters/registry.js';
import { filterBodySchema } from '../../src/filters/schema.js';
import { OPERATORS } from '../../src/filters/types.js';

const SAMPLE: Record<string, unknown> = {
  string: 'x',
  integer: 3,
  number: 1.5,
  boolean: true,
  datetime: '2026-11-23T10:00:00Z',
  // Metadata values are text, compared numerically by the range operators: a number's text suits all.
  metadata: '5',
};

const parses = (filters: unknown) => {
  try {
    parseBodyFilters(LOG_FIELDS, filters);
    return true;
  } catch {
    return false;
  }
};

describe('the filter-language schema', () => {
  const schema = filterBodySchema(LOG_FIELDS);

  it('accepts exactly the field and operator pairs the parser accepts', () => {
    let accepted = 0;
    const names = [...LOG_FIELDS.fields.values()].map((f) => [f.name, f.type] as const);
    for (const [name, type] of [...names, ['metadata__plan', 'metadata'] as const]) {
      for (const operator of [...OPERATORS, 'between']) {
        const value = operator === 'isnull' ? [true] : [SAMPLE[type]];
        const filters = { [name]: { operator, value } };
        const where = `${name} ${operator}`;
        assert.equal(schema.safeParse({ filters }).success, parses(filters), where);
        if (parses(filters)) accepted += 1;
      }
    }
    assert.ok(accepted > 200, `${accepted} pairs accepted`);
  });

  it('refuses what the parser refuses: keys beside operator and value, a filter that is not an object', () => {
    for (const filters of [{ cost: { operator: 'gt', value: [1], connector: 'or' } }, { cost: 5 }, { model: [] }]) {
      assert.equal(parses(filters), false, JSON.stringify(filters));
      assert.equal(schema.safeParse({ filters }).success, false, JSON.stringify(filters));
    }
  });
});
