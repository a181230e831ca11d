/**
 * The Sessions page's pure parts: its URL ⇄ state (the explorer's window and filters, a sort of its own,
 * the open session), the calls it makes, how a duration and a session's developers read, and a call's
 * turn read from a conversation (chat's tool messages and Anthropic's tool_use / tool_result blocks).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shownMessage, turnOf } from '../../ui/src/lib/messages.js';
import { parseScreen } from '../../ui/src/lib/screen.js';
import {
  callsRequest,
  developers,
  durationText,
  parseSessionsView,
  sessionsQuery,
  sessionsRequest,
  sessionState,
} from '../../ui/src/lib/sessions.js';
import { parseViewState } from '../../ui/src/lib/view-state.js';

const AT = '2026-11-24T10:00:00.000Z';

describe('web UI sessions page state', () => {
  it('is the sessions screen, its defaults written as nothing more than v=sessions', () => {
    assert.deepEqual(parseScreen('?v=sessions'), { kind: 'sessions' });
    const view = parseSessionsView('?v=sessions');
    assert.equal(view.sort, '-last_seen');
    assert.equal(view.session, null);
    assert.equal(sessionsQuery(view.state, view.sort), '?v=sessions');
  });

  it('round-trips the window, filters, sort, page and the open session', () => {
    const search =
      `?v=sessions&range=24h&at=${encodeURIComponent(AT)}` +
      `&filters=${encodeURIComponent('[{"field":"model","operator":"","values":["gpt-4o"]}]')}` +
      '&sort=cost&page=3&session=a%26b%3Dc';
    const view = parseSessionsView(search);
    assert.equal(view.sort, 'cost');
    assert.equal(view.session, 'a&b=c');
    assert.equal(view.state.page, 3);
    assert.deepEqual(view.state.conditions, [{ field: 'model', operator: '', values: ['gpt-4o'] }]);
    assert.deepEqual(parseSessionsView(sessionsQuery(view.state, view.sort, view.session)), view);
    // The session is never read as a URL quick filter.
    assert.equal(view.state.quick, undefined);
  });

  it('leaves `session` a URL quick filter (a metadata key) on the other screens', () => {
    assert.deepEqual(parseViewState('?session=abc').quick, [['session', 'abc']]);
    assert.deepEqual(parseViewState('?v=dashboard&session=abc').quick, [['session', 'abc']]);
    assert.equal(parseViewState('?v=sessions&session=abc').quick, undefined);
  });

  it('reads a sort the sessions do not take (the explorer’s) as the default', () => {
    assert.equal(parseSessionsView('?v=sessions&sort=-latency').sort, '-last_seen');
    assert.equal(parseSessionsView('?v=sessions&sort=-cost').sort, '-cost');
  });

  it('asks for sessions with the list’s window, sort and filters, and a session’s calls oldest first', () => {
    const view = parseSessionsView(
      `?v=sessions&at=${encodeURIComponent(AT)}&sort=-cost&page=2&feature=search` +
        `&filters=${encodeURIComponent('[{"field":"thread_identifier","operator":"","values":["x"]}]')}`,
    );
    const list = sessionsRequest(view, Date.parse(AT), 50);
    const q = new URLSearchParams(list.query);
    assert.equal(q.get('sort_by'), '-cost');
    assert.equal(q.get('page'), '2');
    assert.equal(q.get('page_size'), '50');
    assert.equal(q.get('end_time'), AT);
    assert.equal(q.get('feature'), 'search');
    const calls = callsRequest(view.state, 'sess-1', Date.parse(AT), 1, 100);
    const c = new URLSearchParams(calls.query);
    assert.equal(c.get('sort_by'), 'timestamp');
    assert.equal(c.get('page'), '1');
    // The session's own thread replaces any other thread filter.
    assert.deepEqual(calls.body.filters, { thread_identifier: { operator: '', value: ['sess-1'] } });
  });

  it('asks for a session’s calls and totals without a URL quick filter on another thread', () => {
    const view = parseSessionsView(
      `?v=sessions&at=${encodeURIComponent(AT)}&thread_identifier[operator]=not&thread_identifier[value]=x&model=m`,
    );
    assert.equal(view.state.quick?.length, 3);
    for (const { query, body } of [
      callsRequest(view.state, 'sess-1', Date.parse(AT), 1, 100),
      sessionsRequest({ ...view, state: sessionState(view.state, 'sess-1') }, Date.parse(AT), 1),
    ]) {
      const q = new URLSearchParams(query);
      // The API keeps a URL filter over a body filter on the same field: the session's would be dropped.
      assert.deepEqual(
        [...q.keys()].filter((k) => k.startsWith('thread_identifier')),
        [],
      );
      assert.equal(q.get('model'), 'm');
      assert.deepEqual(body.filters.thread_identifier, { operator: '', value: ['sess-1'] });
    }
  });

  it('reads durations and developers', () => {
    assert.equal(durationText(0), '0 ms');
    assert.equal(durationText(42_400), '42 s');
    assert.equal(durationText(10 * 60_000), '10 min');
    assert.equal(durationText(12 * 60_000 + 5_000), '12 min 5 s');
    assert.equal(durationText(3 * 3_600_000 + 20 * 60_000), '3 h 20 min');
    assert.equal(durationText(2 * 86_400_000 + 4 * 3_600_000), '2 d 4 h');
    const owners: Record<string, string> = { 'dev-7': 'Developer One', 'dev-7-2': 'Developer One' };
    assert.deepEqual(
      developers(['ci', 'dev-7', 'dev-7-2'], (k) => owners[k] ?? null),
      ['ci', 'Developer One'],
    );
  });
});

describe('web UI a call’s turn in a conversation', () => {
  it('is what the prompt added after the last answer, then the answer; the system prompt left out', () => {
    const turn = turnOf(
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'fix it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'read', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'file text' },
      ],
      { role: 'assistant', content: 'done' },
    );
    assert.deepEqual(
      turn?.map((m) => [m.role, m.text]),
      [
        ['tool', 'file text'],
        ['assistant', 'done'],
      ],
    );
    assert.deepEqual(
      turnOf(
        [
          { role: 'system', content: 's' },
          { role: 'user', content: 'hi' },
        ],
        null,
      )?.map((m) => m.text),
      ['hi'],
    );
    assert.equal(turnOf(null, null), null);
  });

  it('reads Anthropic’s tool_use blocks as tool calls and a message of tool results as the tool’s', () => {
    const use = shownMessage({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running them.' },
        { type: 'tool_use', id: 'toolu_1', name: 'run_tests', input: { file: 'a.ts' } },
      ],
    });
    assert.equal(use?.text, 'Running them.');
    assert.deepEqual(use?.toolCalls, [{ id: 'toolu_1', name: 'run_tests', arguments: '{"file":"a.ts"}' }]);
    const result = shownMessage({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '3 passed' }] }],
    });
    assert.deepEqual([result?.role, result?.text, result?.toolCallId], ['tool', '3 passed', 'toolu_1']);
  });
});
