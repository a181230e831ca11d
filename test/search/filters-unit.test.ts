import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { compileFilter } from '../../src/filters/compile.js';
import { parseBodyFilters } from '../../src/filters/parse-body.js';
import { parseUrlFilters } from '../../src/filters/parse-url.js';
import { LOG_FIELDS } from '../../src/filters/registry.js';
import { and, type FilterLeaf, type FilterNode } from '../../src/filters/types.js';
import { compiler } from '../support/sql-compiler.js';

function compile(dialect: 'sqlite' | 'postgres', node: FilterNode) {
  const ctx = {
    dialect,
    registry: LOG_FIELDS,
    organizationId: 'org-1',
  };
  const query = compiler(dialect).selectFrom('logs').select('logs.id').where(compileFilter(ctx, node)).compile();
  return { sql: query.sql.replace(/^select "logs"\."id" from "logs" where /, ''), parameters: query.parameters };
}

const badRequest = (param: string | null, message?: RegExp) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.status, 400);
  assert.equal(err.param, param);
  if (message) assert.match(err.message, message);
  return true;
};

describe('body filter parser', () => {
  it('coerces values to the field type and defaults the operator', () => {
    const leaves = parseBodyFilters(LOG_FIELDS, {
      status_code: { value: ['200', 404] },
      stream: { operator: 'not', value: 'true' },
      timestamp: { operator: 'gte', value: ['2026-11-22T10:00:00'] },
      model: { operator: 'in', value: 'gpt-4o, gpt-4o-mini' },
      metadata__plan: { value: [1, true] },
      scores__e1: { operator: 'gt', value: '0.5' },
      thread_identifier: { operator: 'isnull', value: [true] },
    });
    assert.deepEqual(
      leaves.map((l) => [l.target.name, l.operator, l.values]),
      [
        ['status_code', '', [200, 404]],
        ['stream', 'not', [true]],
        ['timestamp', 'gte', [Date.parse('2026-11-22T10:00:00Z')]],
        ['model', 'in', ['gpt-4o', 'gpt-4o-mini']],
        ['metadata__plan', '', ['1', 'true']],
        ['scores__e1', 'gt', [0.5]],
        ['thread_identifier', 'isnull', [true]],
      ],
    );
  });

  it('names the field, operator or value that is wrong', () => {
    const cases: [unknown, string | null, RegExp][] = [
      [[], 'filters', /must be an object/],
      [{ nope: { value: [1] } }, 'filters.nope', /Unknown filter field 'nope'/],
      [{ cost: 3 }, 'filters.cost', /must be an object/],
      [{ cost: { operator: 'icontains', value: [1] } }, 'filters.cost.operator', /not allowed for cost/],
      [{ cost: { operator: 'like', value: [1] } }, 'filters.cost.operator', /unknown/],
      [{ model: { operator: 'gt', value: ['a'] } }, 'filters.model.operator', /allowed:/],
      [
        { scores__e1: { operator: 'icontains', value: [1] } },
        'filters.scores__e1.operator',
        /operator 'icontains' is not allowed for scores__<id>; allowed: '', gt, gte, lt, lte, not/,
      ],
      [{ cost: { operator: 'gt', value: [1, 2] } }, 'filters.cost.value', /exactly one value/],
      [{ cost: { value: [] } }, 'filters.cost.value', /at least one value/],
      [{ cost: { operator: 'gt' } }, 'filters.cost.value', /required/],
      [{ status_code: { value: ['abc'] } }, 'filters.status_code.value', /not a valid integer/],
      [{ status_code: { value: [200, 'x'] } }, 'filters.status_code.value.1', /not a valid integer/],
      [{ stream: { value: ['maybe'] } }, 'filters.stream.value', /not a valid boolean/],
      [{ timestamp: { operator: 'gt', value: ['soon'] } }, 'filters.timestamp.value', /not a valid datetime/],
      [{ model: { operator: 'isnull', value: ['x'] } }, 'filters.model.value', /isnull/],
      [{ metadata__n: { operator: 'gt', value: ['abc'] } }, 'filters.metadata__n.value', /not a valid number/],
    ];
    for (const [filters, param, message] of cases) {
      assert.throws(() => parseBodyFilters(LOG_FIELDS, filters), badRequest(param, message), JSON.stringify(filters));
    }
  });
});

describe('URL quick filter parser', () => {
  const parse = (qs: string) => parseUrlFilters(LOG_FIELDS, new URLSearchParams(qs));

  it('skips reserved parameters and routes unknown names to metadata', () => {
    const { node, fields } = parse('page=2&sort_by=-cost&model=gpt-4o&plan=pro&metadata__tier=1');
    assert.deepEqual([...fields], ['model', 'metadata__plan', 'metadata__tier']);
    assert.equal(node?.kind, 'and');
  });

  it('folds connectors left to right without precedence', () => {
    const { node } = parse(
      'model=a&status_code[value]=500&status_code[connector]=OR&stream[value]=true&stream[operator]=not&stream[connector]=AND',
    );
    // ((model = a OR status_code = 500) AND stream not true)
    assert.equal(node?.kind, 'and');
    const [left, right] = (node as { children: FilterNode[] }).children;
    assert.equal(left.kind, 'or');
    assert.deepEqual(right, {
      kind: 'leaf',
      target: { kind: 'column', name: 'stream' },
      operator: 'not',
      values: [true],
    });
  });

  it('rejects what only body filters can do, and repeated fields', () => {
    assert.throws(() => parse('cost[value]=1&cost[operator]=gt'), badRequest('cost[operator]', /use body filters/));
    assert.throws(() => parse('model=a&model=b'), badRequest('model', /more than once/));
    assert.throws(() => parse('model=a&model[value]=b'), badRequest('model', /more than once/));
    assert.throws(() => parse('model[operator]=not'), badRequest('model[value]', /required/));
    assert.throws(() => parse('model[value]=a&model[connector]=XOR'), badRequest('model[connector]', /AND or OR/));
    assert.throws(() => parse('status_code=abc'), badRequest('status_code', /not a valid integer/));
  });
});

describe('filter compiler', () => {
  const leaves = (filters: unknown) => and(parseBodyFilters(LOG_FIELDS, filters));

  it('compiles to deterministic SQL with bound parameters, per dialect', () => {
    const node = leaves({
      model: { operator: 'icontains', value: ['GPT'] },
      cost: { operator: 'gt', value: [0.5] },
      thread_identifier: { operator: 'not', value: ['t1', 't2'] },
      metadata__plan: { value: ['pro'] },
    });
    const sqlite = compile('sqlite', node);
    assert.equal(
      sqlite.sql,
      '(("logs"."model" like ? escape \'\\\' or ("logs"."model" glob ? and instr(gl_lower("logs"."model"), ?) > 0)) and "logs"."cost" > ? and ("logs"."thread_identifier" is null or not ("logs"."thread_identifier" in (?, ?))) and "logs"."id" in (select m.log_id from "log_metadata" as m where m.organization_id = ? and m.key = ? and "m"."value_text" = ?))',
    );
    assert.deepEqual(sqlite.parameters, [
      '%gpt%',
      '*[^\u0001-\u007f]*',
      'gpt',
      0.5,
      't1',
      't2',
      'org-1',
      'plan',
      'pro',
    ]);
    const pg = compile('postgres', node);
    assert.equal(
      pg.sql,
      '(strpos(lower("logs"."model"), lower(cast($1 as text))) > 0 and "logs"."cost" > $2 and ("logs"."thread_identifier" is null or not ("logs"."thread_identifier" in ($3, $4))) and "logs"."id" in (select m.log_id from "log_metadata" as m where m.organization_id = $5 and m.key = $6 and "m"."value_text" = $7))',
    );
    assert.deepEqual(pg.parameters, ['GPT', 0.5, 't1', 't2', 'org-1', 'plan', 'pro']);
  });

  it('compiles planned leaves: candidate values and the per-log metadata test', () => {
    const [customer, plan] = parseBodyFilters(LOG_FIELDS, {
      customer_identifier: { operator: 'contains', value: ['ac'] },
      metadata__plan: { value: ['pro'] },
    }) as FilterLeaf[];
    const node = and([
      { ...customer, candidates: ['acme', 'jack'] },
      { ...plan, metadataForm: 'exists' },
    ]);
    const pg = compile('postgres', node);
    assert.equal(
      pg.sql,
      '(("logs"."customer_identifier" in ($1, $2) and strpos("logs"."customer_identifier", cast($3 as text)) > 0) and exists (select 1 from "log_metadata" as m where m.log_id = "logs"."id" and m.organization_id = $4 and m.key = $5 and "m"."value_text" = $6))',
    );
    assert.deepEqual(pg.parameters, ['acme', 'jack', 'ac', 'org-1', 'plan', 'pro']);
    // No candidate value: nothing can match, whatever the rest of the leaf says.
    assert.equal(compile('sqlite', and([{ ...customer, candidates: [] }])).sql, '1 = 0');
  });

  it('keeps LIKE metacharacters literal by not using LIKE at all', () => {
    const { sql, parameters } = compile(
      'sqlite',
      leaves({ customer_identifier: { operator: 'startswith', value: ['100%_\\'] } }),
    );
    assert.ok(!/like/i.test(sql));
    assert.deepEqual(parameters, ['100%_\\', '100%_\\']);
  });

  it('compiles score filters and metadata isnull against their side tables', () => {
    const { sql, parameters } = compile(
      'postgres',
      leaves({ scores__e1: { operator: 'not', value: [1] }, metadata__k: { operator: 'isnull', value: [true] } }),
    );
    assert.equal(
      sql,
      '("logs"."id" not in (select s.log_id from "scores" as s where s.evaluator_id = $1 and "s"."score_value" = $2) and "logs"."id" not in (select m.log_id from "log_metadata" as m where m.organization_id = $3 and m.key = $4))',
    );
    assert.deepEqual(parameters, ['e1', 1, 'org-1', 'k']);
  });
});
