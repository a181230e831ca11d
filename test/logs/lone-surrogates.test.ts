/**
 * A lone UTF-16 surrogate in a logged text (a JSON body may carry one escaped: "\ud800") is stored, with
 * the batch it came in, on both databases — as replacement characters where the text is a column of its
 * own. On PostgreSQL the writer's rows otherwise go as one JSON parameter, which PostgreSQL refuses to
 * read with a lone surrogate in it (src/db/rows-insert.ts): the whole batch was refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';

describe('a lone surrogate in a logged text', () => {
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    [t, a] = await startAppWithTenant();
  });
  after(() => t.close());

  it('is stored, and the batch it came in with it', async () => {
    const lone = 'half \ud800 of a pair';
    const logs = [
      { model: 'surrogate-model', input: 'plain', output: 'plain', customer_identifier: 'plain-customer' },
      {
        model: 'surrogate-model',
        input: lone,
        output: lone,
        customer_identifier: `customer \udc00`,
        metadata: { note: lone },
      },
    ];
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: logs });
    assert.equal(res.status, 201, res.text);
    await t.flush();
    const [plain, odd] = res.body.unique_ids as string[];
    const one = await api(t.baseUrl, 'GET', `/api/request-logs/${odd}/`, { key: a.key });
    assert.equal(one.status, 200, one.text);
    assert.match(one.body.customer_identifier, /^customer \ufffd+$/);
    assert.match(one.body.metadata.note, /^half .+ of a pair$/);
    assert.match(JSON.stringify(one.body.output), /half .+ of a pair/);
    const other = await api(t.baseUrl, 'GET', `/api/request-logs/${plain}/`, { key: a.key });
    assert.equal(other.status, 200, other.text);
    assert.equal(other.body.customer_identifier, 'plain-customer');
  });
});
