import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type SqlBool, sql } from 'kysely';
import { flattenSql } from '../../src/db/flat-sql.js';
import { compileFilter } from '../../src/filters/compile.js';
import { LOG_FIELDS } from '../../src/filters/registry.js';
import { and, type FilterNode, or } from '../../src/filters/types.js';
import { compiler } from '../support/sql-compiler.js';

const DIALECTS = ['sqlite', 'postgres'] as const;

/** A condition of nested pieces: references with and without a table, odd identifiers, values, a table. */
function nested() {
  const parts = ['a', 'b"c', 'd'].map(
    (v, i) => sql<SqlBool>`(${sql.ref('logs.model')} = ${v} or ${sql.ref(`weird"col${i}`)} like ${`%${v}%`})`,
  );
  return sql<SqlBool>`${sql.join(parts, sql` or `)} and ${sql.ref('logs.id')} in (select log_id from ${sql.table('scores')} where ${sql.lit(1)} = 1)`;
}

describe('flattened SQL', () => {
  for (const dialect of DIALECTS) {
    it(`compiles to the same text and parameters as the nested pieces (${dialect})`, () => {
      const db = compiler(dialect);
      // Values before the condition: PostgreSQL's numbered placeholders continue from them.
      const query = (condition: ReturnType<typeof nested>) =>
        db.selectFrom('logs').select('logs.id').where('logs.organization_id', '=', 'org').where(condition).compile();
      const plain = query(nested());
      const flat = query(flattenSql(nested()));
      assert.equal(flat.sql, plain.sql);
      assert.deepEqual(flat.parameters, plain.parameters);
      assert.equal(plain.parameters.length, 7);
      if (dialect === 'postgres') assert.match(flat.sql, /\$7/);
      assert.match(flat.sql, /"weird""col1"/);
    });

    it(`binds every value of a compiled filter, each use of it numbered where it stands (${dialect})`, () => {
      const many = Array.from({ length: 50 }, (_, i) => `v${i}É`);
      const filter: FilterNode = and([
        { kind: 'leaf', target: { kind: 'column', name: 'error_message' }, operator: 'icontains', values: many },
        or([
          { kind: 'leaf', target: { kind: 'column', name: 'model' }, operator: 'iexact', values: ['GPT', 'ß'] },
          {
            kind: 'leaf',
            target: { kind: 'metadata', name: 'metadata__plan', key: 'plan' },
            operator: '',
            values: ['pro'],
          },
        ]),
      ]);
      const condition = compileFilter({ dialect, registry: LOG_FIELDS, organizationId: 'org-1' }, filter);
      const db = compiler(dialect);
      const one = db.selectFrom('logs').select('logs.id').where(condition).compile();
      const two = db.selectFrom('logs').select('logs.id').where(condition).where(condition).compile();
      for (const v of many) assert.ok(!one.sql.includes(v) && !one.sql.includes(v.toLowerCase()), v);
      assert.ok(one.parameters.includes('pro'));
      assert.deepEqual(two.parameters, [...one.parameters, ...one.parameters]);
      if (dialect === 'postgres') {
        const n = one.parameters.length;
        assert.ok(two.sql.includes(`$${2 * n}`) && !two.sql.includes(`$${2 * n + 1}`));
      } else {
        assert.equal(two.sql.split('?').length - 1, 2 * one.parameters.length);
      }
    });
  }
});
