/**
 * The real coding agents through gatelog (docs/api.md "Coding agents"): Claude Code on the native
 * Anthropic route and Codex on the Responses API, each run non-interactively with a gatelog key for
 * one tool loop against the fake provider — the fake asks for the file-reading tool first, and answers a
 * final text quoting the tool's result after it. Both calls are logged under one thread_identifier, the
 * agent's session header, with their cost; what the agent sends for Anthropic (its `?beta=true`, its
 * `anthropic-beta` header, its `metadata.user_id`) reaches the provider as it came.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { agentBinaries, type AgentBinaries, runAgent } from '../support/agent-tools.js';
import {
  type AgentCall,
  FINAL_PREFIX,
  type FakeAgentProvider,
  startFakeAgentProvider,
  toolResultsOf,
} from '../support/fake-agent-provider.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { registerProviderKey } from '../support/proxy-app.js';

/** What the agent's tool reads: the final answer must quote it, so it went through the loop. */
const NOTE = 'gatelog-note: the launch code is 7341';
const CLAUDE_MODEL = 'claude-sonnet-4-20250514';
const CODEX_MODEL = 'gpt-5';

type Json = Record<string, unknown>;

let binaries: AgentBinaries;
let fake: FakeAgentProvider;
let t: TestApp;
let dir: string;
let notePath: string;

before(async () => {
  binaries = await agentBinaries();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-agents-'));
  notePath = path.join(dir, 'work', 'note.txt');
  fs.mkdirSync(path.dirname(notePath));
  fs.writeFileSync(notePath, `${NOTE}\n`);
  fake = await startFakeAgentProvider(notePath);
  t = await startApp({
    env: { GATELOG_ANTHROPIC_BASE_URL: fake.baseUrl, GATELOG_OPENAI_BASE_URL: `${fake.baseUrl}/v1` },
  });
});

after(async () => {
  await t?.close();
  await fake?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The tenant's logs of the last hour, whole, oldest first. */
async function logsOf(tenant: Tenant): Promise<Json[]> {
  await t.flush();
  const since = new Date(Date.now() - 3_600_000).toISOString();
  const list = await api(t.baseUrl, 'GET', `/api/request-logs/list/?start_time=${since}&page_size=100`, {
    key: tenant.key,
  });
  assert.equal(list.status, 200, list.text);
  const logs: Json[] = [];
  for (const row of list.body.results as { unique_id: string }[]) {
    const item = await api(t.baseUrl, 'GET', `/api/request-logs/${row.unique_id}/`, { key: tenant.key });
    assert.equal(item.status, 200, item.text);
    logs.push(item.body as Json);
  }
  return logs.sort((x, y) => String(x.timestamp).localeCompare(String(y.timestamp)));
}

/** The fake's calls of one route made since `from`, in order. */
function callsTo(route: string, from: number): AgentCall[] {
  return fake.calls.slice(from).filter((call) => call.url.split('?')[0] === route);
}

/** The agent's tool loop at the fake: a call asking for the tool, then one holding its result. */
function assertToolLoop(calls: AgentCall[]): void {
  const withResult = calls.filter((call) => toolResultsOf(call.json).length > 0);
  assert.ok(calls.length >= 2, `at least two calls, got ${calls.length}`);
  assert.equal(withResult.length, 1, 'exactly one call holds the tool result');
  assert.ok(toolResultsOf(withResult[0]!.json).join('').includes(NOTE), 'the tool really read the note');
}

describe('Claude Code through gatelog (the native Anthropic route)', () => {
  it('completes a tool loop; both calls logged under its session id, its betas and user id upstream', async () => {
    const developer = await t.tenant({
      owner: { first_name: 'Developer', last_name: 'One', email: 'developer-one@example.com' },
    });
    await registerProviderKey(t, developer.key, { provider: 'anthropic', api_key: 'sk-ant-agents' });
    const from = fake.calls.length;
    const home = path.join(dir, 'claude-home');
    fs.mkdirSync(home, { recursive: true });
    const run = await runAgent(
      binaries.claude,
      [
        '-p',
        'Read note.txt and tell me what it says.',
        '--output-format',
        'json',
        '--model',
        CLAUDE_MODEL,
        '--allowedTools',
        'Read',
      ],
      {
        cwd: path.dirname(notePath),
        env: {
          HOME: home,
          ANTHROPIC_BASE_URL: `${t.baseUrl}/api/anthropic`,
          ANTHROPIC_API_KEY: developer.key,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
        },
      },
    );
    assert.equal(run.code, 0, `claude exited ${run.code}: ${run.stderr.slice(0, 2000)} ${run.stdout.slice(0, 2000)}`);
    const result = JSON.parse(run.stdout) as { result: string; session_id: string; is_error: boolean };
    assert.equal(result.is_error, false, run.stdout.slice(0, 2000));
    assert.ok(result.result.includes(FINAL_PREFIX) && result.result.includes(NOTE), result.result);

    const calls = callsTo('/v1/messages', from);
    assertToolLoop(calls);
    for (const call of calls) {
      assert.equal(
        call.headers['x-api-key'] ?? '',
        'sk-ant-agents',
        'the provider key went upstream, not the gatelog key',
      );
      assert.ok(call.url.endsWith('?beta=true'), `the query as it came: ${call.url}`);
      assert.ok(String(call.headers['anthropic-beta'] ?? '').includes('claude-code-20250219'), "the agent's betas");
      const metadata = call.json?.metadata as Json | undefined;
      assert.ok(
        typeof metadata?.user_id === 'string' && metadata.user_id.includes(result.session_id),
        'user_id upstream',
      );
    }

    const logs = await logsOf(developer);
    assert.equal(logs.length, calls.length, 'every call the agent made is one log');
    for (const log of logs) {
      assert.equal(log.thread_identifier, result.session_id, 'the session header is the thread');
      assert.equal(log.model, CLAUDE_MODEL);
      assert.ok(Number(log.cost) > 0, `a cost: ${log.cost}`);
      assert.ok(typeof (log.metadata as Json | undefined)?.user_id === 'string', 'the log keeps the metadata');
    }
  });
});

describe('Codex through gatelog (the Responses API)', () => {
  it('completes a tool loop; both calls logged under its session id', async () => {
    const developer = await t.tenant({
      owner: { first_name: 'Developer', last_name: 'Two', email: 'developer-two@example.com' },
    });
    await registerProviderKey(t, developer.key, { provider: 'openai', api_key: 'sk-openai-agents' });
    const from = fake.calls.length;
    const home = path.join(dir, 'codex-home');
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(
      path.join(home, 'config.toml'),
      [
        `model = "${CODEX_MODEL}"`,
        'model_provider = "gatelog"',
        '',
        '[model_providers.gatelog]',
        'name = "gatelog"',
        `base_url = "${t.baseUrl}/v1"`,
        'env_key = "GATELOG_API_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    const run = await runAgent(
      binaries.codex,
      ['exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', 'Read note.txt and tell me what it says.'],
      { cwd: path.dirname(notePath), env: { HOME: home, CODEX_HOME: home, GATELOG_API_KEY: developer.key } },
    );
    assert.equal(run.code, 0, `codex exited ${run.code}: ${run.stderr.slice(-2000)}`);
    assert.ok(run.stdout.includes(FINAL_PREFIX) && run.stdout.includes(NOTE), run.stdout.slice(-2000));

    const calls = callsTo('/v1/responses', from);
    assertToolLoop(calls);
    // Codex names its session in the header of what it prints, and sends it as `session-id` on each call.
    const session = /session id: (\S+)/.exec(run.stderr)?.[1];
    assert.ok(session, `Codex named its session: ${run.stderr.slice(0, 1000)}`);
    for (const call of calls) assert.equal(call.headers.authorization, 'Bearer sk-openai-agents');

    const logs = await logsOf(developer);
    assert.equal(logs.length, calls.length, 'every call the agent made is one log');
    for (const log of logs) {
      assert.equal(log.thread_identifier, session, 'the session header is the thread');
      assert.equal(log.model, CODEX_MODEL);
      assert.ok(Number(log.cost) > 0, `a cost: ${log.cost}`);
    }
  });
});
