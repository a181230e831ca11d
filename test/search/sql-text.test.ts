/**
 * No SQL is made from a caller's text: every query the app runs while it serves requests full of one
 * marker — in log fields, metadata keys and values, filter values and metadata filter keys, sorts, names
 * and descriptions, on every kind of route — is compiled, and the marker must be in no query's SQL, only
 * in its parameters. Field names, sorts and operators come from the filter registry, never from the caller.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresQueryCompiler,
  type QueryResult,
  type RootOperationNode,
  SqliteQueryCompiler,
  sql,
  type UnknownRow,
} from 'kysely';
import { testDialect } from '../support/database.js';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

const MARK = 'zq7mark';
/** The marker alone and inside text that would break out of a quoted SQL string or identifier. */
const hostile = (n: number) => [MARK, `${MARK}' or '1'='1`, `${MARK}"; drop table logs; --`, `${MARK}\\'`][n % 4];

class CompiledQueries implements KyselyPlugin {
  readonly sql: string[] = [];
  readonly parameters: unknown[] = [];
  private readonly compiler = testDialect === 'postgres' ? new PostgresQueryCompiler() : new SqliteQueryCompiler();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const compiled = this.compiler.compileQuery(args.node, args.queryId);
    this.sql.push(compiled.sql);
    this.parameters.push(...compiled.parameters);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describe("a caller's text in SQL", () => {
  const queries = new CompiledQueries();
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant({ plugin: queries })));
  after(() => t.close());

  it('is never part of a query, only of its parameters', async () => {
    const statuses: string[] = [];
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await api(t.baseUrl, method, path, { key: a.key, body });
      assert.ok(res.status < 500, `${method} ${path}: ${res.status} ${res.text}`);
      statuses.push(`${method} ${path.split('?')[0]} ${res.status}`);
      return res;
    };
    const q = encodeURIComponent;

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const created = await call('POST', '/api/request-logs/create/', {
        model: hostile(i),
        customer_identifier: hostile(i + 1),
        custom_identifier: hostile(i + 2),
        thread_identifier: hostile(i + 3),
        prompt_messages: [{ role: 'user', content: hostile(i) }],
        completion_message: { role: 'assistant', content: hostile(i) },
        metadata: { [hostile(i)]: hostile(i + 1), plan: hostile(i + 2), n: i },
      });
      assert.equal(created.status, 201, created.text);
      ids.push(created.body.unique_id);
    }
    await t.flush();
    await call('PATCH', `/api/request-logs/${ids[0]}/`, { metadata: { [hostile(1)]: hostile(2) } });
    await call('GET', `/api/request-logs/${q(hostile(1))}/`);

    for (let i = 0; i < 4; i++) {
      const filters = {
        model: { operator: ['icontains', 'startswith', 'in', 'not'][i], value: [hostile(i)] },
        [`metadata__${hostile(i)}`]: {
          operator: ['', 'iexact', 'contains', 'isnull'][i],
          value: [i === 3 ? false : hostile(i)],
        },
        customer_identifier: { operator: 'endswith', value: [hostile(i + 1)] },
      };
      const listed = await call('POST', '/api/request-logs/list/?fetch_filters=true&sort_by=-cost', { filters });
      assert.equal(listed.status, 200, listed.text);
      await call('GET', `/api/request-logs/list/?model=${q(hostile(i))}&metadata__${q(hostile(i))}=${q(hostile(i))}`);
      await call(
        'GET',
        `/api/request-logs/list/?customer_identifier__icontains=${q(hostile(i))}&sort_by=${q(hostile(i))}`,
      );
      await call('GET', `/api/request-logs/list/?include_fields=${q(hostile(i))}&${q(hostile(i))}=1`);
    }

    // An export and its link: the parameters a link keeps are read back as parameters, never as SQL.
    const exportQuery = `format=csv&fields=model,input&model__icontains=${q(hostile(1))}&metadata__${q(hostile(2))}=1`;
    const exportBody = { filters: { customer_identifier: { operator: 'contains', value: [hostile(3)] } } };
    assert.equal((await call('POST', `/api/request-logs/export/?${exportQuery}`, exportBody)).status, 200);
    const link = await call('POST', `/api/request-logs/export/tokens/?${exportQuery}`, exportBody);
    assert.equal(link.status, 201, link.text);
    const download = await fetch(link.body.url);
    assert.equal(download.status, 200);
    await download.text();
    await call('GET', `/api/request-logs/export/download/?token=${q(hostile(1))}`);

    const evaluator = await call('POST', '/api/evaluators/', { name: hostile(1), description: hostile(2) });
    assert.equal(evaluator.status, 201, evaluator.text);
    const slug = evaluator.body.evaluator_slug;
    await call('POST', `/api/request-logs/${ids[0]}/scores/`, { evaluator_slug: slug, string_value: hostile(3) });
    await call('POST', `/api/request-logs/${ids[1]}/scores/`, { evaluator_slug: hostile(0), numerical_value: 1 });
    await call('POST', '/api/request-logs/list/', { filters: { [`scores__${slug}`]: { operator: 'gt', value: [0] } } });
    await call('PATCH', `/api/evaluators/${q(hostile(2))}/`, { name: hostile(3) });

    const dataset = await call('POST', '/api/datasets/', { name: hostile(2), description: hostile(3) });
    assert.equal(dataset.status, 201, dataset.text);
    const ds = `/api/datasets/${dataset.body.id}`;
    await call('POST', `${ds}/logs/bulk/`, {
      start_time: new Date(Date.now() - 3_600_000).toISOString(),
      end_time: new Date(Date.now() + 60_000).toISOString(),
      filters: { model: { operator: 'icontains', value: [MARK] } },
    });
    await call('POST', `${ds}/logs/`, { log_ids: [ids[0], hostile(1)] });
    await call('POST', `${ds}/logs/list/?sort_by=${q(hostile(0))}`, {
      filters: { [`metadata__${hostile(0)}`]: { value: [hostile(1)] }, customer_identifier: { value: [hostile(2)] } },
    });
    await call('GET', `${ds}/logs/list/?model__icontains=${q(MARK)}&fetch_filters=true`);
    await call('PATCH', ds, { name: hostile(1), description: hostile(0) });
    await call('GET', `/api/datasets/?name=${q(hostile(3))}&search=${q(hostile(3))}`);
    await call('GET', `/api/datasets/${q(hostile(1))}/`);
    await call('DELETE', `${ds}/logs/delete/`, { log_ids: [hostile(2)] });

    const inSql = queries.sql.filter((text) => text.toLowerCase().includes(MARK));
    assert.deepEqual(inSql.slice(0, 3), [], `${inSql.length} queries hold caller text`);
    const answered = statuses.filter((s) => / 20\d$/.test(s)).length;
    assert.ok(answered > statuses.length / 2, `most calls succeed, so their queries ran:\n${statuses.join('\n')}`);
    // The check saw the queries that carried the marker: it reached the database, as parameters.
    const asParameters = queries.parameters.filter((p) => typeof p === 'string' && p.includes(MARK));
    assert.ok(
      asParameters.length > 50,
      `only ${asParameters.length} parameters held the marker: ${statuses.join('\n')}`,
    );
    assert.ok(queries.sql.length > 100, `${queries.sql.length} queries seen`);
  });

  it('would see caller text spliced into SQL', async () => {
    // The detector itself: text put into SQL, as sql.raw would, is in the compiled SQL it checks.
    await sql.raw(`select '${MARK}' as spliced`).execute(t.db.db);
    assert.ok(queries.sql.at(-1)!.includes(MARK));
  });
});
