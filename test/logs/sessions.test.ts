/**
 * GET|POST /api/sessions/: logs grouped by thread_identifier, against a reference computed here from the
 * same logs — every field, both sorts in both directions, pages, URL and body filters, the environment
 * scope, another organization's logs never seen, the `read` scope; a session's calls as the list
 * filtered by its thread_identifier, oldest first. Then proxied calls: a coding agent's session header
 * (Codex's `session-id` on every OpenAI-shaped route, Claude Code's `x-claude-code-session-id` on the
 * Anthropic route; older Codex releases' `session_id`) is the log's thread_identifier unless the call
 * names its own. On the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { createApiKey } from '../../src/auth/api-keys.js';
import { audioPath } from '../support/audio.js';
import { api, startAppWithTwoTenants, type Tenant, type TestApp } from '../support/harness.js';
import { writeLogBatch } from '../support/logs-api.js';
import { logNamedBy, type ProxyTestApp, startClaudeProxyApp } from '../support/proxy-app.js';
import type { FakeAnthropic } from '../support/fake-anthropic.js';

const MINUTE = 60_000;

interface Seed {
  thread: string | null;
  minute: number;
  model: string;
  cost: number;
  prompt: number;
  completion: number;
  status: number;
  customer?: string;
  /** The second key of the organization wrote it (else the tenant's own key). */
  second?: boolean;
  /** A test key wrote it. */
  test?: boolean;
}

interface Session {
  thread_identifier: string;
  first_seen: string;
  last_seen: string;
  calls: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  models: string[];
  keys: string[];
  customers: string[];
}

// Minutes after the window's start; a negative one falls before it.
const SEEDS: Seed[] = [
  { thread: 's-alpha', minute: -5, model: 'm-old', cost: 9, prompt: 1, completion: 1, status: 200, customer: 'c9' },
  { thread: 's-alpha', minute: 1, model: 'm1', cost: 0.1, prompt: 10, completion: 5, status: 200, customer: 'c1' },
  { thread: 's-alpha', minute: 5, model: 'm2', cost: 0.2, prompt: 20, completion: 6, status: 200, second: true },
  { thread: 's-alpha', minute: 9, model: 'm1', cost: 0.05, prompt: 30, completion: 0, status: 500, customer: 'c1' },
  { thread: 's-beta', minute: 2, model: 'm1', cost: 0.5, prompt: 40, completion: 7, status: 429, customer: 'c3' },
  { thread: 's-beta', minute: 7, model: 'm1', cost: 0.25, prompt: 50, completion: 8, status: 200, customer: 'c3' },
  { thread: 's-gamma', minute: 3, model: 'm3', cost: 0.01, prompt: 60, completion: 9, status: 200, customer: 'c2' },
  { thread: null, minute: 4, model: 'm1', cost: 5, prompt: 70, completion: 10, status: 200, customer: 'c1' },
  { thread: 's-test', minute: 6, model: 'm1', cost: 1, prompt: 80, completion: 11, status: 200, test: true },
  { thread: 's-alpha', minute: 8, model: 'm4', cost: 2, prompt: 90, completion: 12, status: 200, test: true },
];

describe('GET|POST /api/sessions/', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const start = Date.now() - 60 * MINUTE;
  const end = start + 30 * MINUTE;
  const window = `start_time=${new Date(start).toISOString()}&end_time=${new Date(end).toISOString()}`;
  const at = (minute: number) => new Date(start + minute * MINUTE).toISOString();

  /** The sessions the reference makes of the seeds that `keep` keeps (in the window, production unless said). */
  const reference = (keep: (s: Seed) => boolean = () => true, envs: 'prod' | 'test' | 'all' = 'prod') => {
    const groups = new Map<string, Seed[]>();
    for (const s of SEEDS) {
      const env = envs === 'all' || (envs === 'test') === (s.test ?? false);
      if (s.thread === null || s.minute < 0 || !env || !keep(s)) continue;
      groups.set(s.thread, [...(groups.get(s.thread) ?? []), s]);
    }
    const distinct = (values: (string | undefined)[]) => [...new Set(values.filter((v): v is string => !!v))].sort();
    return [...groups].map(([thread, logs]): Session => ({
      thread_identifier: thread,
      first_seen: at(Math.min(...logs.map((l) => l.minute))),
      last_seen: at(Math.max(...logs.map((l) => l.minute))),
      calls: logs.length,
      errors: logs.filter((l) => l.status >= 400).length,
      cost: logs.reduce((sum, l) => sum + l.cost, 0),
      prompt_tokens: logs.reduce((sum, l) => sum + l.prompt, 0),
      completion_tokens: logs.reduce((sum, l) => sum + l.completion, 0),
      models: distinct(logs.map((l) => l.model)),
      keys: distinct(logs.map((l) => (l.test ? 'test-env-key' : l.second ? 'second-key' : 'test-key'))),
      customers: distinct(logs.map((l) => l.customer)),
    }));
  };
  const byLastSeen = (x: Session, y: Session) => x.last_seen.localeCompare(y.last_seen);
  const byCost = (x: Session, y: Session) => x.cost - y.cost || byLastSeen(x, y);

  /** Sessions answered, their costs rounded (sums of floating-point costs). */
  const read = async (query: string, options: { key?: string; body?: unknown } = {}) => {
    const method = options.body === undefined ? 'GET' : 'POST';
    const res = await api(t.baseUrl, method, `/api/sessions/?${window}&${query}`, {
      key: options.key ?? a.key,
      body: options.body,
    });
    assert.equal(res.status, 200, res.text);
    return res.body as { count: number; next: string | null; previous: string | null; results: Session[] };
  };
  const rounded = (sessions: Session[]) => sessions.map((s) => ({ ...s, cost: Math.round(s.cost * 1e9) / 1e9 }));

  before(async () => {
    [t, a, b] = await startAppWithTwoTenants();
    const second = await createApiKey(t.db.db, { organizationId: a.org.id, name: 'second-key', isTest: false });
    const testKey = await createApiKey(t.db.db, { organizationId: a.org.id, name: 'test-env-key', isTest: true });
    const logOf = (s: Seed) => ({
      model: s.model,
      cost: s.cost,
      prompt_tokens: s.prompt,
      completion_tokens: s.completion,
      status_code: s.status,
      timestamp: at(s.minute),
      ...(s.thread === null ? {} : { thread_identifier: s.thread }),
      ...(s.customer === undefined ? {} : { customer_identifier: s.customer }),
    });
    const writer = (s: Seed) => (s.test ? testKey.key : s.second ? second.key : a.key);
    for (const key of [a.key, second.key, testKey.key]) {
      const logs = SEEDS.filter((s) => writer(s) === key).map(logOf);
      await writeLogBatch(t, { ...a, key }, logs);
    }
    // Another organization's session of the same name, in the same window: never counted, never seen.
    await writeLogBatch(t, b, [
      { model: 'm-other', cost: 100, thread_identifier: 's-alpha', timestamp: at(10), customer_identifier: 'cx' },
    ]);
  });
  after(() => t.close());

  it('answers each session of the window with every field, latest active first by default', async () => {
    const page = await read('');
    const expected = reference().sort(byLastSeen).reverse();
    assert.deepEqual(rounded(page.results), rounded(expected));
    assert.equal(page.count, 3);
    assert.equal(page.next, null);
    assert.equal(page.previous, null);
    // The reference agrees with what it is meant to say.
    const alpha = page.results[0];
    assert.equal(alpha.thread_identifier, 's-alpha');
    assert.deepEqual([alpha.calls, alpha.errors, alpha.first_seen, alpha.last_seen], [3, 1, at(1), at(9)]);
    assert.deepEqual([alpha.models, alpha.keys, alpha.customers], [['m1', 'm2'], ['second-key', 'test-key'], ['c1']]);
    assert.ok(Math.abs(alpha.cost - 0.35) < 1e-9, String(alpha.cost));
  });

  it('sorts by last_seen or cost, either way', async () => {
    const all = reference();
    const cases: [string, Session[]][] = [
      ['-last_seen', [...all].sort(byLastSeen).reverse()],
      ['last_seen', [...all].sort(byLastSeen)],
      ['-cost', [...all].sort(byCost).reverse()],
      ['cost', [...all].sort(byCost)],
    ];
    for (const [sort, expected] of cases) {
      const page = await read(`sort_by=${sort}`);
      assert.deepEqual(
        page.results.map((s) => s.thread_identifier),
        expected.map((s) => s.thread_identifier),
        sort,
      );
    }
    assert.deepEqual(
      (await read('sort_by=-cost')).results.map((s) => s.thread_identifier),
      ['s-beta', 's-alpha', 's-gamma'],
    );
  });

  it('pages: page_size, next and previous, a page past the end', async () => {
    const first = await read('page_size=2');
    assert.deepEqual(
      first.results.map((s) => s.thread_identifier),
      ['s-alpha', 's-beta'],
    );
    assert.equal(first.count, 3);
    assert.ok(first.next?.includes('page=2'), String(first.next));
    assert.equal(first.previous, null);
    const second = await read('page_size=2&page=2');
    assert.deepEqual(
      second.results.map((s) => s.thread_identifier),
      ['s-gamma'],
    );
    assert.equal(second.count, 3);
    assert.equal(second.next, null);
    assert.ok(second.previous?.includes('page=1'), String(second.previous));
    const past = await read('page_size=2&page=5&sort_by=cost');
    assert.deepEqual(past.results, []);
    assert.equal(past.count, 3, 'counted without a row to count from');
  });

  it('filters as the list does: URL quick filters, body filters, thread_identifier itself', async () => {
    const m2 = await read('model=m2');
    assert.deepEqual(rounded(m2.results), rounded(reference((s) => s.model === 'm2')));
    assert.equal(m2.results[0].calls, 1, 'only the matching calls count');
    const failed = await read('', { body: { filters: { status_code: { operator: 'gte', value: [400] } } } });
    assert.deepEqual(
      rounded(failed.results),
      rounded(
        reference((s) => s.status >= 400)
          .sort(byLastSeen)
          .reverse(),
      ),
    );
    const c2 = await read('sort_by=cost', { body: { filters: { customer_identifier: { value: ['c2'] } } } });
    assert.deepEqual(
      c2.results.map((s) => s.thread_identifier),
      ['s-gamma'],
    );
    const beta = await read('thread_identifier=s-beta');
    assert.deepEqual(rounded(beta.results), rounded(reference((s) => s.thread === 's-beta')));
    const none = await read('customer_identifier=nobody');
    assert.deepEqual([none.count, none.results], [0, []]);
    // A URL name read as a metadata key is said so, as the list says it.
    const slip = await api(t.baseUrl, 'GET', `/api/sessions/?${window}&modle=m1`, { key: a.key });
    assert.equal(slip.headers.get('x-gatelog-metadata-filters'), 'modle');
  });

  it("reads the list's environment scope: production by default, is_test, all_envs", async () => {
    const test = await read('is_test=true');
    assert.deepEqual(rounded(test.results), rounded(reference(undefined, 'test').sort(byLastSeen).reverse()));
    const all = await read('all_envs=true');
    assert.deepEqual(rounded(all.results), rounded(reference(undefined, 'all').sort(byLastSeen).reverse()));
    assert.deepEqual(all.results[0].keys, ['second-key', 'test-env-key', 'test-key']);
  });

  it("never shows another organization's logs", async () => {
    const theirs = await read('', { key: b.key });
    assert.equal(theirs.count, 1);
    assert.deepEqual(
      theirs.results.map((s) => [s.thread_identifier, s.calls, s.cost, s.models]),
      [['s-alpha', 1, 100, ['m-other']]],
    );
    const ours = (await read('thread_identifier=s-alpha')).results[0];
    assert.equal(ours.calls, 3);
    assert.ok(!ours.models.includes('m-other'));
  });

  it('lists no session for an empty thread_identifier', async () => {
    await writeLogBatch(t, a, [{ model: 'm1', cost: 3, thread_identifier: '', timestamp: at(12) }]);
    const page = await read('');
    assert.deepEqual(
      page.results.map((s) => s.thread_identifier),
      ['s-alpha', 's-beta', 's-gamma'],
    );
    assert.equal(page.count, 3);
    assert.equal((await read('page=2&page_size=3')).count, 3, 'nor counts it');
  });

  it("lists a session's calls as the list filtered by its thread_identifier, oldest first", async () => {
    const res = await api(
      t.baseUrl,
      'GET',
      `/api/request-logs/list/?${window}&thread_identifier=s-alpha&sort_by=timestamp`,
      {
        key: a.key,
      },
    );
    assert.equal(res.status, 200, res.text);
    const calls = res.body.results as { timestamp: string; model: string; thread_identifier: string }[];
    assert.deepEqual(
      calls.map((c) => [c.timestamp, c.model, c.thread_identifier]),
      [
        [at(1), 'm1', 's-alpha'],
        [at(5), 'm2', 's-alpha'],
        [at(9), 'm1', 's-alpha'],
      ],
    );
    assert.equal(res.body.count, 3);
  });

  it('refuses a bad sort_by, a bad filter, and a key without the read scope', async () => {
    const sort = await api(t.baseUrl, 'GET', '/api/sessions/?sort_by=calls', { key: a.key });
    assert.equal(sort.status, 400, sort.text);
    assert.equal(sort.body.error.param, 'sort_by');
    assert.ok(sort.body.error.message.includes('last_seen'), sort.text);
    const filter = await api(t.baseUrl, 'POST', '/api/sessions/', {
      key: a.key,
      body: { filters: { cost: { operator: 'icontains', value: ['x'] } } },
    });
    assert.equal(filter.status, 400, filter.text);
    assert.equal(filter.body.error.param, 'filters.cost.operator');
    const range = await api(t.baseUrl, 'GET', '/api/sessions/?start_time=yesterday', { key: a.key });
    assert.equal(range.status, 400, range.text);
    assert.equal(range.body.error.param, 'start_time');
    const created = await api(t.baseUrl, 'POST', '/api/keys/', {
      key: a.key,
      body: { name: 'models-only', scopes: ['models'] },
    });
    assert.equal(created.status, 201, created.text);
    for (const method of ['GET', 'POST']) {
      const refused = await api(t.baseUrl, method, '/api/sessions/', {
        key: created.body.key,
        body: method === 'POST' ? {} : undefined,
      });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.error.code, 'permission_denied');
      assert.ok(refused.body.error.message.includes("'read'"), refused.text);
    }
  });
});

describe("a coding agent's session header is its calls' thread_identifier", () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  let codex: OpenAI;
  const wav = fs.readFileSync(audioPath('hello.wav'));

  before(async () => {
    ({ p, claude } = await startClaudeProxyApp());
    codex = new OpenAI({
      apiKey: p.a.key,
      baseURL: `${p.t.baseUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'session-id': 'codex-session-1' },
    });
  });
  after(async () => {
    await p.close();
    await claude.close();
  });

  const threadOf = async (logId: string | null) => (await logNamedBy(p, logId)).thread_identifier as string | null;

  it("Codex's session-id on chat, responses, embeddings and transcriptions", async () => {
    const chat = await codex.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(await threadOf(chat.response.headers.get('x-gatelog-log-id')), 'codex-session-1');
    const streamed = await codex.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    for await (const chunk of streamed.data) void chunk;
    assert.equal(await threadOf(streamed.response.headers.get('x-gatelog-log-id')), 'codex-session-1');
    const responses = await codex.responses.create({ model: 'gpt-4o-mini', input: 'hi' }).withResponse();
    assert.equal(await threadOf(responses.response.headers.get('x-gatelog-log-id')), 'codex-session-1');
    const embeddings = await codex.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' }).withResponse();
    assert.equal(await threadOf(embeddings.response.headers.get('x-gatelog-log-id')), 'codex-session-1');
    const transcription = await codex.audio.transcriptions
      .create({ file: await toFile(wav, 'hello.wav'), model: 'whisper-1' })
      .withResponse();
    assert.equal(await threadOf(transcription.response.headers.get('x-gatelog-log-id')), 'codex-session-1');

    // Kept by gatelog: the provider never gets the header.
    assert.equal(p.fake.requests.length, 5);
    for (const sent of p.fake.requests) assert.equal(sent.headers['session-id'], undefined, sent.path);

    // The session, as the sessions route shows it.
    const res = await api(p.t.baseUrl, 'GET', '/api/sessions/?thread_identifier=codex-session-1', { key: p.a.key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.count, 1);
    const [session] = res.body.results as Session[];
    assert.equal(session.calls, 5);
    assert.deepEqual(session.models, ['gpt-4o-mini', 'text-embedding-3-small', 'whisper-1']);

    // Codex's older releases spell it with an underscore.
    const older = new OpenAI({
      apiKey: p.a.key,
      baseURL: `${p.t.baseUrl}/v1`,
      maxRetries: 0,
      defaultHeaders: { session_id: 'older-codex-session-2' },
    });
    const spelt = await older.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(await threadOf(spelt.response.headers.get('x-gatelog-log-id')), 'older-codex-session-2');
  });

  it("Claude Code's x-claude-code-session-id on the Anthropic route, a refused call's log included", async () => {
    const claudeCode = new Anthropic({
      apiKey: p.a.key,
      baseURL: `${p.t.baseUrl}/api/anthropic`,
      maxRetries: 0,
      defaultHeaders: { 'x-claude-code-session-id': 'claude-session-7' },
    });
    const message = await claudeCode.messages
      .create({ model: 'claude-sonnet-4-20250514', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(await threadOf(message.response.headers.get('x-gatelog-log-id')), 'claude-session-7');
    assert.equal(claude.requests.at(-1)?.headers['x-claude-code-session-id'], undefined, 'not sent upstream');
    // A call gatelog refuses (no max_tokens) is logged in its session too.
    const refused = await fetch(`${p.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': p.a.key,
        'content-type': 'application/json',
        'x-claude-code-session-id': 'claude-session-7',
      },
      body: JSON.stringify({ model: 'claude-sonnet-4-20250514', messages: 'not a list' }),
    });
    assert.equal(refused.status, 400, await refused.text());
    assert.equal(await threadOf(refused.headers.get('x-gatelog-log-id')), 'claude-session-7');
  });

  it('an explicit thread_identifier wins over the header; a call with neither has none', async () => {
    const chat = await codex.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
        thread_identifier: 'my-thread',
      } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    assert.equal(await threadOf(chat.response.headers.get('x-gatelog-log-id')), 'my-thread');
    const claudeCode = new Anthropic({
      apiKey: p.a.key,
      baseURL: `${p.t.baseUrl}/api/anthropic`,
      maxRetries: 0,
      defaultHeaders: { 'x-claude-code-session-id': 'claude-session-8' },
    });
    const message = await claudeCode.messages
      .create({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        thread_identifier: 'my-claude-thread',
      } as Anthropic.MessageCreateParamsNonStreaming)
      .withResponse();
    assert.equal(await threadOf(message.response.headers.get('x-gatelog-log-id')), 'my-claude-thread');
    // An empty one names none: the header is the thread.
    const empty = await claudeCode.messages
      .create({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        thread_identifier: '',
      } as Anthropic.MessageCreateParamsNonStreaming)
      .withResponse();
    assert.equal(await threadOf(empty.response.headers.get('x-gatelog-log-id')), 'claude-session-8');
    const plain = new OpenAI({ apiKey: p.a.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    const none = await plain.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(await threadOf(none.response.headers.get('x-gatelog-log-id')), null);
  });
});
