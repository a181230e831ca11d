/** The web UI's pure modules: the URL ⇄ state codec, the list call it makes, and how values read. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { costText, preview, secondsText, timeText } from '../../ui/src/lib/format.js';
import { conversationOf, embeddingTexts } from '../../ui/src/lib/messages.js';
import { formatQueryText, parseQueryText, QueryTextError } from '../../ui/src/lib/query-text.js';
import { formatScreen, parseScreen, type Screen } from '../../ui/src/lib/screen.js';
import {
  curlFor,
  formatViewState,
  shellQuote,
  listRequest,
  parseViewState,
  resolveWindow,
  spanMs,
  type Condition,
  type ViewState,
} from '../../ui/src/lib/view-state.js';

describe('web UI view state in the URL', () => {
  it('reads an empty query as the defaults, and writes the defaults as an empty query', () => {
    const state = parseViewState('');
    assert.deepEqual(state, {
      window: { kind: 'relative', span: '1h', at: null },
      conditions: [],
      sort: '-id',
      page: 1,
      log: null,
    });
    assert.equal(formatViewState(state), '');
  });

  it('round-trips every part: window, filters, sort, page and the open log', () => {
    const states: ViewState[] = [
      {
        window: { kind: 'relative', span: '90m', at: '2026-11-24T10:00:00.000Z' },
        conditions: [
          { field: 'model', operator: '', values: ['gpt-4o'] },
          { field: 'cost', operator: 'gt', values: [0.01] },
          { field: 'metadata__feature', operator: 'icontains', values: ['a, b & c=d'] },
          { field: 'stream', operator: 'not', values: [true] },
        ],
        sort: 'scores__3f2a-9',
        page: 7,
        log: '0192f0c1-0000-7000-8000-000000000001',
      },
      {
        window: { kind: 'absolute', from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z' },
        conditions: [],
        sort: 'cost',
        page: 1,
        log: null,
      },
    ];
    for (const state of states) assert.deepEqual(parseViewState(formatViewState(state)), state);
  });

  it('drops what it cannot read instead of failing: bad windows, pages, sorts and filters', () => {
    const state = parseViewState(
      '?range=forever&at=yesterday&page=-3&sort=1;drop&filters=' +
        encodeURIComponent(
          JSON.stringify([
            { field: 'model', operator: 'sounds_like', values: ['x'] },
            { field: 'cost', operator: 'gt', values: [] },
            { field: 'latency', operator: 'lt', values: [{ nested: 1 }] },
            { field: 'customer_identifier', values: ['acme'] },
            { field: 'customer_identifier', values: ['second of a field is dropped'] },
            'not an object',
          ]),
        ),
    );
    assert.deepEqual(state.window, { kind: 'relative', span: '1h', at: null });
    assert.equal(state.page, 1);
    assert.equal(state.sort, '-id');
    assert.deepEqual(state.conditions, [{ field: 'customer_identifier', operator: '', values: ['acme'] }]);
    assert.deepEqual(parseViewState('?filters=%7Bnot-json').conditions, []);
    // An absolute window whose start is after its end is not one.
    assert.equal(parseViewState('?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z').window.kind, 'relative');
  });

  it('reads typed windows in minutes, hours and days, and nothing else', () => {
    assert.equal(spanMs('90m'), 90 * 60_000);
    assert.equal(spanMs('3d'), 3 * 86_400_000);
    assert.equal(spanMs(' 24h '), 86_400_000);
    for (const bad of ['0m', '1w', 'h', '1.5h', '-1h', '']) assert.equal(spanMs(bad), null, bad);
  });

  it('anchors a relative window at its `at`, or at now when it has none', () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    assert.deepEqual(resolveWindow({ kind: 'relative', span: '15m', at: null }, now), {
      start: '2026-11-24T11:45:00.000Z',
      end: '2026-11-24T12:00:00.000Z',
    });
    assert.deepEqual(resolveWindow({ kind: 'relative', span: '1d', at: '2026-11-20T00:00:00.000Z' }, now), {
      start: '2026-11-19T00:00:00.000Z',
      end: '2026-11-20T00:00:00.000Z',
    });
  });

  it('turns a state into the list call: query parameters and the filter language body', () => {
    const state = parseViewState(
      `?range=24h&at=2026-11-24T12:00:00.000Z&sort=-cost&page=3&filters=${encodeURIComponent(
        JSON.stringify([
          { field: 'model', operator: 'in', values: ['a', 'b'] },
          { field: 'status_code', operator: 'not', values: [200] },
        ]),
      )}`,
    );
    const { query, body } = listRequest(state, Date.now(), 50);
    const q = new URLSearchParams(query);
    assert.equal(q.get('start_time'), '2026-11-23T12:00:00.000Z');
    assert.equal(q.get('end_time'), '2026-11-24T12:00:00.000Z');
    assert.equal(q.get('page'), '3');
    assert.equal(q.get('page_size'), '50');
    assert.equal(q.get('sort_by'), '-cost');
    assert.deepEqual(body, {
      filters: { model: { operator: 'in', value: ['a', 'b'] }, status_code: { operator: 'not', value: [200] } },
    });
  });
});

describe('web UI copy as cURL', () => {
  it('quotes for a POSIX shell and leaves the key to $GATELOG_KEY', () => {
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    const state = parseViewState(
      `?at=2026-11-24T12:00:00.000Z&filters=${encodeURIComponent(JSON.stringify([{ field: 'model', operator: '', values: ["o'brien"] }]))}`,
    );
    const command = curlFor('http://127.0.0.1:8080/api/', state, 0, 50);
    assert.match(
      command,
      /^curl -s -X POST 'http:\/\/127\.0\.0\.1:8080\/api\/request-logs\/list\/\?start_time=2026-11-24T11%3A00%3A00\.000Z&/,
    );
    assert.ok(command.includes('-H "Authorization: Bearer $GATELOG_KEY"'));
    assert.ok(command.includes(`-d '{"filters":{"model":{"operator":"","value":["o'\\''brien"]}}}'`));
  });
});

describe('web UI formatting', () => {
  it('previews the last message, a text, or compact JSON, on one line and cut', () => {
    assert.equal(preview(JSON.stringify([{ role: 'user', content: 'Hi\n  there' }])), 'Hi there');
    assert.equal(preview(JSON.stringify({ role: 'assistant', content: 'Hello' })), 'Hello');
    assert.equal(preview(JSON.stringify({ text: 'transcribed' })), 'transcribed');
    assert.equal(preview(JSON.stringify(['a', 'b'])), 'a | b');
    assert.equal(preview(JSON.stringify({ dimensions: 3 })), '{"dimensions":3}');
    assert.equal(preview('{"cut by the server'), '{"cut by the server');
    assert.equal(preview(null), '');
    assert.equal(preview('x'.repeat(500), 10), `${'x'.repeat(9)}…`);
  });

  it('shows costs without exponents and durations in ms below a second', () => {
    assert.equal(costText(0), '$0');
    assert.equal(costText(0.0000133), '$0.0000133');
    assert.equal(costText(0.000218), '$0.000218');
    assert.equal(costText(1.5), '$1.50');
    assert.equal(secondsText(0.0123), '12 ms');
    assert.equal(secondsText(2.5), '2.50 s');
  });

  it('writes times in UTC when asked, whatever the offset they came with', () => {
    assert.equal(timeText('2026-11-24T21:05:03.250Z', 'utc'), '2026-11-24 21:05:03 UTC');
    assert.equal(timeText('2026-11-24T23:05:03+02:00', 'utc'), '2026-11-24 21:05:03 UTC');
    assert.equal(timeText('not a time', 'utc'), 'not a time');
  });
});

describe('web UI screens in the URL', () => {
  it('round-trips the datasets, one dataset, its annotation and the settings; anything else is the log explorer', () => {
    const screens: Exclude<Screen, { kind: 'logs' }>[] = [
      { kind: 'datasets', page: 1 },
      { kind: 'datasets', page: 4 },
      { kind: 'dataset', id: 'ds_1', page: 2 },
      { kind: 'annotate', id: 'ds_1', item: 17 },
      { kind: 'settings' },
    ];
    for (const screen of screens) assert.deepEqual(parseScreen(formatScreen(screen)), screen);
    assert.equal(formatScreen({ kind: 'settings' }), '?v=settings');
    assert.deepEqual(parseScreen(''), { kind: 'logs' });
    assert.deepEqual(parseScreen('?range=1h&v=unknown'), { kind: 'logs' });
    // A dataset screen without its id falls back to the list; bad numbers to 1.
    assert.deepEqual(parseScreen('?v=dataset'), { kind: 'datasets', page: 1 });
    assert.deepEqual(parseScreen('?v=annotate&id=x&item=0'), { kind: 'annotate', id: 'x', item: 1 });
  });
});

describe('web UI filters as text', () => {
  it('reads terms of every operator', () => {
    assert.deepEqual(
      parseQueryText(
        'model:gpt-4o cost>0.01 not status_code:200 customer_identifier~acme metadata__f:"a b" -error_message:null',
      ),
      [
        { field: 'model', operator: '', values: ['gpt-4o'] },
        { field: 'cost', operator: 'gt', values: [0.01] },
        { field: 'status_code', operator: 'not', values: [200] },
        { field: 'customer_identifier', operator: 'icontains', values: ['acme'] },
        { field: 'metadata__f', operator: '', values: ['a b'] },
        { field: 'error_message', operator: 'isnull', values: [false] },
      ],
    );
    assert.deepEqual(parseQueryText('  latency<=2.5   log_type:chat,embedding stream:true prompt_id.startswith:p_ '), [
      { field: 'latency', operator: 'lte', values: [2.5] },
      { field: 'log_type', operator: 'in', values: ['chat', 'embedding'] },
      { field: 'stream', operator: '', values: [true] },
      { field: 'prompt_id', operator: 'startswith', values: ['p_'] },
    ]);
    assert.deepEqual(parseQueryText(''), []);
    // search: the API's full-text field takes operator '' only, its values ORed.
    assert.deepEqual(parseQueryText('search:"refund policy" model:gpt-4o search2:x'), [
      { field: 'search', operator: '', values: ['refund policy'] },
      { field: 'model', operator: '', values: ['gpt-4o'] },
      { field: 'search2', operator: '', values: ['x'] },
    ]);
    assert.deepEqual(parseQueryText('search:refund,"charge back"'), [
      { field: 'search', operator: '', values: ['refund', 'charge back'] },
    ]);
  });

  it('writes conditions that read back as the same conditions', () => {
    const conditions: Condition[] = [
      { field: 'model', operator: '', values: ['gpt-4o'] },
      { field: 'metadata__code', operator: '', values: ['200'] },
      { field: 'metadata__quote', operator: 'not', values: ['say "hi" \\ bye'] },
      { field: 'customer_identifier', operator: 'iexact', values: ['ACME'] },
      { field: 'cost', operator: 'gte', values: [0.5] },
      { field: 'log_type', operator: 'in', values: ['chat', 'a,b', 'true'] },
      { field: 'time_to_first_token', operator: 'isnull', values: [true] },
      { field: 'scores__9f1c-4a', operator: 'lt', values: [3] },
      { field: 'span_name', operator: 'contains', values: ['-x: y'] },
      { field: 'failed', operator: '', values: [false] },
      { field: 'search', operator: '', values: ['refund policy', 'ünï'] },
    ];
    const text = formatQueryText(conditions);
    assert.deepEqual(parseQueryText(text), conditions, text);
  });

  it('says where a text cannot be read', () => {
    const cases: [string, RegExp][] = [
      ['model', /one of : ~ > >= < <=/],
      ['model:"open', /not closed/],
      ['model:a model:b', /appears twice/],
      ['not cost>1', /Only an equality/],
      ['123:x', /field name/],
      ['model.sounds:x', /Unknown operator/],
      ['model:', /value is missing/],
    ];
    for (const [text, message] of cases) {
      assert.throws(
        () => parseQueryText(text),
        (err: unknown) => err instanceof QueryTextError && message.test(err.message),
        text,
      );
    }
  });
});

describe('web UI logs read as what they are', () => {
  it('reads a chat as its messages: roles, texts of any content form, tool calls and their results', () => {
    const conversation = conversationOf(
      [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: {} },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"found":true}' },
      ],
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
      },
    );
    assert.deepEqual(conversation, [
      { role: 'system', text: 'Be brief.', toolCalls: [], toolCallId: null },
      { role: 'user', text: 'What is this?\n[image_url]', toolCalls: [], toolCallId: null },
      { role: 'tool', text: '{"found":true}', toolCalls: [], toolCallId: 'call_0' },
      {
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }],
        toolCallId: null,
      },
    ]);
    assert.equal(conversationOf(null, null), null);
    assert.deepEqual(conversationOf([{ role: 'user', content: 'hi' }], null), [
      { role: 'user', text: 'hi', toolCalls: [], toolCallId: null },
    ]);
  });

  it("reads a response's items that are no chat message by their type", () => {
    const summary = [{ type: 'summary_text', text: 'Thought about it.' }];
    assert.deepEqual(
      conversationOf(
        [
          { type: 'reasoning', id: 'rs_1', summary },
          { type: 'item_reference', id: 'msg_1' },
        ],
        null,
      ),
      [
        { role: 'reasoning', text: 'Thought about it.', toolCalls: [], toolCallId: null },
        { role: 'item_reference', text: '', toolCalls: [], toolCallId: null },
      ],
    );
  });

  it("reads an embedding call's input as its texts", () => {
    assert.deepEqual(embeddingTexts(JSON.stringify(['a', 'b'])), ['a', 'b']);
    assert.deepEqual(embeddingTexts(JSON.stringify('one')), ['one']);
    assert.equal(embeddingTexts(JSON.stringify([[1, 2, 3]])), null, 'token arrays are not texts');
    assert.equal(embeddingTexts('["cut short by the serv'), null);
    assert.equal(embeddingTexts(null), null);
  });
});
