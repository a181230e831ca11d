/**
 * What one OTLP trace export may hold (docs/api.md "OpenTelemetry", Bounds), in both forms: spans past the
 * export's bound and spans past their own counted as rejected in one partialSuccess count; values nested
 * too deep a 400; and a NUL in a span's text stored as U+FFFD on either database, the rest of the export
 * with it and nothing refused by the database — on the database GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import {
  deepValueJson,
  deepValueProtobuf,
  exportOf,
  hex,
  jsonSpan,
  partialSuccessOf,
  postTraces,
  protobufSpanWithValue,
  refusalOf,
  toProtobuf,
  type TracesAnswer,
} from '../support/otlp-wire.js';
import { traceLogsBySpanName } from '../support/trace-logs.js';

type Log = Record<string, unknown>;
type Form = 'json' | 'protobuf';
const FORMS: Form[] = ['json', 'protobuf'];
const TYPES = { json: 'application/json', protobuf: 'application/x-protobuf' } as const;

const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
const attributes = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `a${i}`, value: { intValue: String(i) } }));

describe('OTLP export bounds', () => {
  let t: TestApp;
  let a: Tenant;

  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  const send = (form: Form, body: unknown): Promise<TracesAnswer> =>
    postTraces(t.baseUrl, a.key, form === 'json' ? JSON.stringify(body) : toProtobuf(body), TYPES[form]);

  const traceLogs = (traceId: string) => traceLogsBySpanName(t, a, traceId);

  for (const form of FORMS) {
    it(`${form}: spans past the 10,000th are not read, counted with the others rejected as one number`, async () => {
      const traceId = hex(16);
      const spans = [
        jsonSpan(traceId, 'first'),
        jsonSpan(traceId, 'second'),
        ...Array.from({ length: 9998 }, () => ({})),
        jsonSpan(traceId, 'past 1'),
        jsonSpan(traceId, 'past 2'),
        jsonSpan(traceId, 'past 3'),
      ];
      const res = await send(form, exportOf(spans));
      assert.equal(res.status, 200);
      const partial = partialSuccessOf(res)!;
      assert.equal(partial.rejectedSpans, '10001');
      assert.match(partial.errorMessage, /^spans past the first 10000 of an export are not read \(3\); /);
      assert.match(partial.errorMessage, /; and 9994 more$/);
      assert.ok(partial.errorMessage.length < 600, 'one count and a few reasons, not a list');
      const logs = await traceLogs(traceId);
      assert.deepEqual([...logs.keys()].sort(), ['first', 'second']);
    });

    it(`${form}: a span past its own bounds is rejected, the spans within them stored`, async () => {
      const traceId = hex(16);
      const event = { name: 'e', timeUnixNano: jsonSpan(traceId, '').endTimeUnixNano };
      const link = { traceId: hex(16), spanId: hex(8) };
      const many = { key: 'vector', value: { arrayValue: { values: attributes(100_000).map((kv) => kv.value) } } };
      const spans = [
        jsonSpan(traceId, 'attributes', { attributes: attributes(1001) }),
        jsonSpan(traceId, 'events', { events: Array.from({ length: 1001 }, () => event) }),
        jsonSpan(traceId, 'links', { links: Array.from({ length: 1001 }, () => link) }),
        jsonSpan(traceId, 'values', { attributes: [many] }),
        jsonSpan(traceId, 'at the bounds', {
          attributes: attributes(1000),
          events: Array.from({ length: 1000 }, () => event),
          links: Array.from({ length: 1000 }, () => link),
        }),
        jsonSpan(traceId, 'plain'),
      ];
      const res = await send(form, exportOf(spans));
      assert.equal(res.status, 200);
      const partial = partialSuccessOf(res)!;
      assert.equal(partial.rejectedSpans, '4');
      assert.equal(
        partial.errorMessage,
        'span 1 of the export holds more than 1000 attributes; span 2 of the export holds more than 1000 events; ' +
          'span 3 of the export holds more than 1000 links; span 4 of the export holds more than 100000 values',
      );
      const logs = await traceLogs(traceId);
      assert.deepEqual([...logs.keys()].sort(), ['at the bounds', 'plain']);
    });
  }

  it('attribute values nested past 32 levels are a 400 in either form; 32 levels are stored', async () => {
    for (const depth of [5000, 33]) {
      const json = await postTraces(t.baseUrl, a.key, deepValueJson(hex(16), 'deep', depth), TYPES.json);
      assert.equal(json.status, 400, `json, ${depth} deep`);
      assert.deepEqual(refusalOf(json), {
        code: 3,
        message: 'The body is not an OTLP trace export: an attribute value nests deeper than 32 levels.',
      });
      const proto = await postTraces(
        t.baseUrl,
        a.key,
        protobufSpanWithValue(hex(16), 'deep', deepValueProtobuf(depth)),
        TYPES.protobuf,
      );
      assert.equal(proto.status, 400, `protobuf, ${depth} deep`);
      assert.equal(proto.type, 'application/x-protobuf');
      assert.match(refusalOf(proto).message, /nests deeper than 32 levels/);
    }
    const jsonTrace = hex(16);
    const json = await postTraces(t.baseUrl, a.key, deepValueJson(jsonTrace, 'deep enough', 32), TYPES.json);
    assert.equal(json.status, 200);
    assert.equal(partialSuccessOf(json), undefined);
    const protoTrace = hex(16);
    const proto = protobufSpanWithValue(protoTrace, 'deep enough', deepValueProtobuf(32));
    const res = await postTraces(t.baseUrl, a.key, proto, TYPES.protobuf);
    assert.equal(res.status, 200);
    assert.equal(partialSuccessOf(res), undefined);
    assert.ok((await traceLogs(jsonTrace)).has('deep enough'));
    assert.ok((await traceLogs(protoTrace)).has('deep enough'));
  });

  it('OTLP/JSON nested 5,000 deep anywhere is a 400, as is JSON that only starts well', async () => {
    const deepList = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"unknown":${'['.repeat(5000)}${']'.repeat(5000)}}]}]}]}`;
    const res = await postTraces(t.baseUrl, a.key, deepList, TYPES.json);
    assert.equal(res.status, 400);
    assert.match(refusalOf(res).message, /nests deeper than 128 levels/);
    const deepObject = `{"resourceSpans":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    assert.equal((await postTraces(t.baseUrl, a.key, deepObject, TYPES.json)).status, 400);
    for (const bad of [
      '{"resourceSpans":[{"scopeSpans":[{"spans":[{}]}]}]}x',
      '{"a":"\\x"}',
      '{"a":01}',
      '{"a":[1,]}',
    ]) {
      const answer = await postTraces(t.baseUrl, a.key, bad, TYPES.json);
      assert.equal(answer.status, 400, bad);
      assert.match(refusalOf(answer).message, /not JSON/, bad);
    }
  });

  it('OTLP/JSON objects where numbers or text belong (even with toString as data) are read as nothing, not a 500', async () => {
    const traceId = hex(16);
    const odd = { toString: 1, valueOf: 'x' };
    const span = jsonSpan(traceId, 'odd values', {
      attributes: [
        text('gen_ai.operation.name', 'chat'),
        { key: 'gen_ai.request.model', value: { stringValue: odd } },
        { key: 'gen_ai.usage.input_tokens', value: { intValue: [odd] } },
        { key: 'gen_ai.usage.output_tokens', value: { doubleValue: odd } },
        {
          key: 'gen_ai.prompt.0.role',
          value: { kvlistValue: { values: [{ key: 'toString', value: { intValue: 1 } }] } },
        },
        text('gen_ai.prompt.0.content', 'hello'),
        text(
          'gen_ai.input.messages',
          JSON.stringify([{ role: odd, parts: [{ type: 'tool_call', id: odd, name: odd }] }]),
        ),
      ],
      status: { code: odd },
    });
    const res = await send('json', exportOf([span]));
    assert.equal(res.status, 200, res.bytes.toString());
    const stored = (await traceLogs(traceId)).get('odd values')!;
    assert.ok(stored, 'the span is stored');
    assert.equal(stored.prompt_tokens, 0);
    assert.equal(stored.status_code, 200);
  });

  for (const form of FORMS) {
    it(`${form}: a NUL in a span's name, model or any text is stored as U+FFFD, the rest of the export with it`, async () => {
      const traceId = hex(16);
      const root = jsonSpan(traceId, 'root\u0000span', {
        attributes: [
          text('gen_ai.operation.name', 'chat'),
          text('gen_ai.request.model', 'gpt\u00004o'),
          text('gen_ai.provider.name', 'open\u0000ai'),
          text('gen_ai.conversation.id', 'thread\u0000'),
          text('enduser.id', 'user\u0000'),
          text('key\u0000with nul', 'value'),
          text(
            'gen_ai.input.messages',
            JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'a\u0000b' }] }]),
          ),
        ],
        events: [{ name: 'exception\u0000', attributes: [text('exception.message', 'boom\u0000')] }],
        status: { code: 2, message: 'failed\u0000here' },
      });
      const child = jsonSpan(traceId, 'child', { parentSpanId: root.spanId });
      const body = exportOf([child, root], [text('service.name', 'svc\u0000')]);
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await send(form, body);
        assert.equal(res.status, 200, res.bytes.toString());
        assert.equal(partialSuccessOf(res), undefined);
      }
      const logs = await traceLogs(traceId);
      assert.deepEqual([...logs.keys()].sort(), ['child', 'root\uFFFDspan'], 'both spans stored, once');
      const stored = logs.get('root\uFFFDspan')!;
      assert.equal(stored.model, 'gpt\uFFFD4o');
      assert.equal(stored.provider_id, 'open\uFFFDai');
      assert.equal(stored.thread_identifier, 'thread\uFFFD');
      assert.equal(stored.customer_identifier, 'user\uFFFD');
      assert.equal(stored.error_message, 'failed\uFFFDhere');
      assert.equal((stored.metadata as Log).service_name, 'svc\uFFFD');
      // JSON text holds NUL escaped, as the logging API stores it: kept as it came.
      const input = typeof stored.input === 'string' ? JSON.parse(stored.input) : stored.input;
      assert.equal(input[0].content, 'a\u0000b');
      assert.equal(logs.get('child')!.span_workflow_name, 'root\uFFFDspan', "the root's name given to its trace");
      const dead = await t.db.db.selectFrom('dead_letters').select('error').limit(3).execute();
      assert.deepEqual(dead, [], 'nothing refused by the database');
    });
  }
});
