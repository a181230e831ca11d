import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { insertScore } from '../../src/evaluators/repository.js';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('evaluators and scores', () => {
  let t: TestApp;
  let a: Tenant;
  const call = (method: string, path: string, body?: unknown, key = a.key) =>
    api(t.baseUrl, method, path, { key, body });
  const newLog = async (key = a.key) => {
    const res = await call('POST', '/api/request-logs/create/', { model: 'm' }, key);
    return res.body.unique_id as string;
  };

  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  it('answers 404, not 500, when the log was deleted between its lookup and the score (a foreign key fails)', async () => {
    const evaluator = await call('POST', '/api/evaluators/', { name: 'vanishing' });
    assert.equal(evaluator.status, 201);
    for (const table of ['scores', 'dataset_log_scores'] as const) {
      const score = {
        table,
        organizationId: a.org.id,
        logId: 2_000_000_000,
        evaluatorId: evaluator.body.id as string,
        numericalValue: 1,
        booleanValue: null,
        scoreValue: 1,
      };
      await assert.rejects(insertScore(t.db.db, score), (err) => err instanceof AppError && err.status === 404);
    }
  });

  it('creates evaluators with defaults and a derived slug; a duplicate slug is a 409', async () => {
    const res = await call('POST', '/api/evaluators/', { name: 'Answer Relevance!' });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'created_at',
      'description',
      'evaluator_slug',
      'id',
      'name',
      'score_value_type',
      'type',
      'updated_at',
    ]);
    assert.equal(res.body.evaluator_slug, 'answer_relevance');
    assert.equal(res.body.type, 'human');
    assert.equal(res.body.score_value_type, 'numerical');
    const dup = await call('POST', '/api/evaluators/', { name: 'answer relevance' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.type, 'conflict_error');
    assert.equal(dup.body.error.param, 'evaluator_slug');
    const other = await t.tenant();
    assert.equal((await call('POST', '/api/evaluators/', { name: 'Answer Relevance!' }, other.key)).status, 201);
  });

  it('rejects bad evaluator bodies', async () => {
    for (const [body, param] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', type: 'robot' }, 'type'],
      [{ name: 'x', score_value_type: 'text' }, 'score_value_type'],
      [{ name: 'x', evaluator_slug: 'Has Space' }, 'evaluator_slug'],
    ] as const) {
      const res = await call('POST', '/api/evaluators/', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param);
    }
  });

  it('lists, reads, patches and deletes evaluators, isolated per organization', async () => {
    const b = await t.tenant();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three'])
      ids.push((await call('POST', '/api/evaluators/', { name }, b.key)).body.id);
    const page = await call('GET', '/api/evaluators/?page_size=2', undefined, b.key);
    assert.equal(page.body.count, 3);
    assert.equal(page.body.results.length, 2);
    assert.ok(page.body.next);
    const got = await call('GET', `/api/evaluators/${ids[0]}/`, undefined, b.key);
    assert.equal(got.body.name, 'one');
    const patched = await call('PATCH', `/api/evaluators/${ids[0]}/`, { name: 'uno', description: 'first' }, b.key);
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'uno');
    assert.equal(patched.body.evaluator_slug, 'one');
    const refused = await call('PATCH', `/api/evaluators/${ids[0]}/`, { score_value_type: 'boolean' }, b.key);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.detail, "The field 'score_value_type' cannot be modified");
    const clash = await call('PATCH', `/api/evaluators/${ids[0]}/`, { evaluator_slug: 'two' }, b.key);
    assert.equal(clash.status, 409);

    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await call(method, `/api/evaluators/${ids[0]}/`, method === 'PATCH' ? { name: 'x' } : undefined);
      assert.equal(res.status, 404, method);
    }
    assert.equal((await call('DELETE', `/api/evaluators/${ids[0]}/`, undefined, b.key)).status, 204);
    assert.equal((await call('GET', `/api/evaluators/${ids[0]}/`, undefined, b.key)).status, 404);
  });

  it('scores a log with numerical and boolean evaluators; the log shows them as a map', async () => {
    const quality = (await call('POST', '/api/evaluators/', { name: 'quality' })).body;
    const safe = (await call('POST', '/api/evaluators/', { name: 'safe', score_value_type: 'boolean' })).body;
    const logId = await newLog();

    const s1 = await call('POST', `/api/logs/${logId}/scores/`, { evaluator_id: quality.id, numerical_value: 4.5 });
    assert.equal(s1.status, 201);
    assert.deepEqual(Object.keys(s1.body).sort(), [
      'boolean_value',
      'created_at',
      'evaluator_id',
      'evaluator_slug',
      'id',
      'log_id',
      'numerical_value',
      'score_value',
    ]);
    assert.equal(s1.body.log_id, logId);
    assert.equal(s1.body.score_value, 4.5);
    const s2 = await call('POST', `/api/request-logs/${logId}/scores/`, {
      evaluator_slug: 'safe',
      boolean_value: true,
    });
    assert.equal(s2.status, 201);
    assert.equal(s2.body.score_value, 1);
    assert.equal(s2.body.boolean_value, true);

    const item = (await call('GET', `/api/request-logs/${logId}/`)).body;
    assert.deepEqual(item.scores, {
      [quality.id]: { evaluator_name: 'quality', evaluator_slug: 'quality', score_value: 4.5 },
      [safe.id]: { evaluator_name: 'safe', evaluator_slug: 'safe', score_value: 1 },
    });
    const listed = (await call('GET', '/api/request-logs/list/')).body.results.find(
      (r: { unique_id: string }) => r.unique_id === logId,
    );
    assert.deepEqual(listed.scores, item.scores);

    const dup = await call('POST', `/api/logs/${logId}/scores/`, { evaluator_id: quality.id, numerical_value: 1 });
    assert.equal(dup.status, 409);
    const scores = await call('GET', `/api/logs/${logId}/scores/`);
    assert.equal(scores.body.results.length, 2);

    assert.equal((await call('DELETE', `/api/logs/${logId}/scores/${s1.body.id}/`)).status, 204);
    assert.equal((await call('DELETE', `/api/logs/${logId}/scores/${s1.body.id}/`)).status, 404);
    const after = (await call('GET', `/api/request-logs/${logId}/`)).body;
    assert.deepEqual(Object.keys(after.scores), [safe.id]);
  });

  it('rejects bad score bodies', async () => {
    const num = (await call('POST', '/api/evaluators/', { name: 'num-check' })).body;
    const boo = (await call('POST', '/api/evaluators/', { name: 'bool-check', score_value_type: 'boolean' })).body;
    const logId = await newLog();
    const cases: [unknown, number, string][] = [
      [{ numerical_value: 1 }, 400, 'evaluator_id'],
      [{ evaluator_id: num.id }, 400, 'numerical_value'],
      [{ evaluator_id: num.id, boolean_value: true }, 400, 'numerical_value'],
      [{ evaluator_id: boo.id, numerical_value: 1 }, 400, 'boolean_value'],
      [{ evaluator_id: num.id, numerical_value: 'high' }, 400, 'numerical_value'],
      [{ evaluator_id: '00000000-0000-0000-0000-000000000000', numerical_value: 1 }, 404, 'evaluator_id'],
      [{ evaluator_slug: 'missing', numerical_value: 1 }, 404, 'evaluator_slug'],
    ];
    for (const [body, status, param] of cases) {
      const res = await call('POST', `/api/logs/${logId}/scores/`, body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
    assert.deepEqual((await call('GET', `/api/logs/${logId}/scores/`)).body.results, []);
  });

  it("keeps another organization's logs, evaluators and scores out of reach", async () => {
    const b = await t.tenant();
    const theirs = (await call('POST', '/api/evaluators/', { name: 'theirs' }, b.key)).body;
    const theirLog = await newLog(b.key);
    const theirScore = (
      await call('POST', `/api/logs/${theirLog}/scores/`, { evaluator_id: theirs.id, numerical_value: 1 }, b.key)
    ).body;
    const mine = (await call('POST', '/api/evaluators/', { name: 'mine' })).body;
    const myLog = await newLog();

    assert.equal(
      (await call('POST', `/api/logs/${theirLog}/scores/`, { evaluator_id: mine.id, numerical_value: 1 })).status,
      404,
    );
    assert.equal((await call('GET', `/api/logs/${theirLog}/scores/`)).status, 404);
    assert.equal((await call('DELETE', `/api/logs/${theirLog}/scores/${theirScore.id}/`)).status, 404);
    const useTheirEvaluator = await call('POST', `/api/logs/${myLog}/scores/`, {
      evaluator_id: theirs.id,
      numerical_value: 1,
    });
    assert.equal(useTheirEvaluator.status, 404);
    assert.equal((await call('GET', `/api/logs/${theirLog}/scores/`, undefined, b.key)).body.results.length, 1);
  });
});
