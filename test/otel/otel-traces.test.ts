/**
 * OpenTelemetry ingestion: the real OpenTelemetry SDK with its OTLP protobuf and JSON exporters pointed at
 * gatelog, spans in the GenAI, OpenLLMetry and OpenInference styles, nested; OTLP payloads as those
 * instrumentations send them; gzip; bad bodies; a retried export stored once; tenancy; on the database
 * GATELOG_TEST_DB names.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { context, type Span, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as HttpExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { otlpTypes } from '../../src/otel/otlp-proto.js';
import { api, startAppWithTwoTenants, type Tenant, type TestApp } from '../support/harness.js';
import { genAiPayload, openInferencePayload, openLlmetryPayload } from '../support/otlp-payloads.js';
import { postTraces, protobufForm } from '../support/otlp-wire.js';
import { traceLogsBySpanName } from '../support/trace-logs.js';

type Log = Record<string, unknown>;

function provider(exporter: ProtoExporter | HttpExporter) {
  return new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
}

/** A child of `parent`, without a global context manager. */
const childOf = (tracer: Tracer, parent: Span, name: string, attributes: Record<string, string | number | boolean>) =>
  tracer.startSpan(name, { attributes }, trace.setSpan(context.active(), parent));

const post = (t: TestApp, key: string, body: Buffer | string, type: string, headers: Record<string, string> = {}) =>
  postTraces(t.baseUrl, key, body, type, headers);

describe('OpenTelemetry ingestion', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;

  before(async () => ([t, a, b] = await startAppWithTwoTenants()));
  after(() => t.close());

  it('stores a nested trace from the SDK and its protobuf exporter (gzip), GenAI attributes read into a chat log', async () => {
    const exporter = new ProtoExporter({
      url: `${t.baseUrl}/api/v1/traces`,
      headers: { Authorization: `Bearer ${a.key}` },
      compression: 'gzip' as never,
    });
    const tp = provider(exporter);
    const tracer = tp.getTracer('support-bot');
    const root = tracer.startSpan('answer-ticket');
    const agent = childOf(tracer, root, 'invoke_agent helper', { 'gen_ai.operation.name': 'invoke_agent' });
    const call = childOf(tracer, agent, 'chat gpt-4o-mini', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 300,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.conversation.id': 'conv-9',
      'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Be brief.' }]),
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: 'Where is my refund?' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [
            { type: 'text', content: 'Let me look.' },
            { type: 'tool_call', id: 'call_1', name: 'find_order', arguments: { order: 42 } },
          ],
          finish_reason: 'tool_call',
        },
      ]),
    });
    call.end();
    const tool = childOf(tracer, agent, 'execute_tool find_order', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.call.arguments': '{"order":42}',
      'gen_ai.tool.call.result': '{"status":"refunded"}',
    });
    tool.setStatus({ code: SpanStatusCode.ERROR, message: 'order service timed out' });
    tool.end();
    agent.end();
    root.end();
    await tp.forceFlush();
    await tp.shutdown();

    const traceId = root.spanContext().traceId;
    const logs = await traceLogsBySpanName(t, a, traceId);
    assert.deepEqual([...logs.keys()].sort(), [
      'answer-ticket',
      'chat gpt-4o-mini',
      'execute_tool find_order',
      'invoke_agent helper',
    ]);
    const rootLog = logs.get('answer-ticket')!;
    assert.equal(rootLog.log_type, 'workflow');
    assert.equal(rootLog.span_parent_id, null);
    const agentLog = logs.get('invoke_agent helper')!;
    assert.equal(agentLog.log_type, 'agent');
    assert.equal(agentLog.span_parent_id, root.spanContext().spanId);
    const chat = logs.get('chat gpt-4o-mini')!;
    assert.equal(chat.log_type, 'chat');
    assert.equal(chat.span_unique_id, call.spanContext().spanId);
    assert.equal(chat.span_parent_id, agent.spanContext().spanId);
    assert.equal(chat.span_workflow_name, 'answer-ticket');
    assert.equal(chat.model, 'gpt-4o-mini');
    assert.equal(chat.provider_id, 'openai');
    assert.equal(chat.prompt_tokens, 1200);
    assert.equal(chat.completion_tokens, 300);
    assert.ok(typeof chat.cost === 'number' && chat.cost > 0, `cost computed from the price: ${String(chat.cost)}`);
    assert.equal(chat.temperature, 0.2);
    assert.equal(chat.thread_identifier, 'conv-9');
    assert.deepEqual(chat.prompt_messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Where is my refund?' },
    ]);
    assert.equal((chat.completion_message as Log).content, 'Let me look.');
    assert.deepEqual(chat.tool_calls, [
      { id: 'call_1', type: 'function', function: { name: 'find_order', arguments: '{"order":42}' } },
    ]);
    assert.equal(chat.status_code, 200);
    assert.ok(typeof chat.latency === 'number' && chat.latency >= 0);
    assert.equal((chat.metadata as Log).otel_scope, 'support-bot');
    const toolLog = logs.get('execute_tool find_order')!;
    assert.equal(toolLog.log_type, 'tool');
    assert.equal(toolLog.status_code, 500);
    assert.equal(toolLog.error_message, 'order service timed out');
    assert.equal(toolLog.input, '{"order":42}');
    assert.equal(toolLog.output, '{"status":"refunded"}');
  });

  it('takes the JSON exporter, OpenLLMetry attributes read through their fallbacks', async () => {
    const exporter = new HttpExporter({ url: `${t.baseUrl}/v1/traces`, headers: { Authorization: `Bearer ${a.key}` } });
    const tp = provider(exporter);
    const tracer = tp.getTracer('traceloop');
    const root = tracer.startSpan('triage.workflow', {
      attributes: { 'traceloop.span.kind': 'workflow', 'traceloop.workflow.name': 'triage' },
    });
    const call = childOf(tracer, root, 'openai.chat', {
      'llm.request.type': 'chat',
      'gen_ai.system': 'OpenAI',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.prompt_tokens': 50,
      'gen_ai.usage.completion_tokens': 7,
      'llm.is_streaming': true,
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'Classify.',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'My card was charged twice',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'billing',
      'traceloop.workflow.name': 'triage',
    });
    call.end();
    root.end();
    await tp.forceFlush();
    await tp.shutdown();
    const logs = await traceLogsBySpanName(t, a, root.spanContext().traceId);
    const chat = logs.get('openai.chat')!;
    assert.equal(chat.log_type, 'chat');
    assert.equal(chat.provider_id, 'openai');
    assert.equal(chat.model, 'gpt-4o');
    assert.equal(chat.prompt_tokens, 50);
    assert.equal(chat.completion_tokens, 7);
    assert.equal(chat.stream, true);
    assert.equal(chat.span_workflow_name, 'triage');
    assert.deepEqual(chat.prompt_messages, [
      { role: 'system', content: 'Classify.' },
      { role: 'user', content: 'My card was charged twice' },
    ]);
    assert.deepEqual(chat.completion_message, { role: 'assistant', content: 'billing' });
    assert.equal(logs.get('triage.workflow')!.log_type, 'workflow');
  });

  it('reads payloads as GenAI, OpenLLMetry and OpenInference instrumentations send them', async () => {
    for (const payload of [genAiPayload(), openLlmetryPayload(), openInferencePayload()]) {
      const res = await post(t, a.key, JSON.stringify(payload.body), 'application/json');
      assert.equal(res.status, 200, res.bytes.toString());
      assert.deepEqual(JSON.parse(res.bytes.toString()), {});
      const logs = await traceLogsBySpanName(t, a, payload.traceId);
      for (const [name, expected] of Object.entries(payload.expect)) {
        const log = logs.get(name);
        assert.ok(log, `${payload.style}: a log for span '${name}'`);
        for (const [field, value] of Object.entries(expected)) {
          assert.deepEqual(log[field], value, `${payload.style} › ${name} › ${field}`);
        }
      }
    }
  });

  it('stores a retried export once, sent again or at the same time', async () => {
    const payload = genAiPayload();
    const { request } = otlpTypes();
    const body = Buffer.from(request.encode(request.fromObject(protobufForm(payload.body))).finish());
    const sends = await Promise.all([1, 2, 3].map(() => post(t, a.key, body, 'application/x-protobuf')));
    for (const s of sends) assert.equal(s.status, 200);
    assert.equal(
      (await post(t, a.key, zlib.gzipSync(body), 'application/x-protobuf', { 'content-encoding': 'gzip' })).status,
      200,
    );
    const logs = await traceLogsBySpanName(t, a, payload.traceId);
    const res = await api(
      t.baseUrl,
      'GET',
      `/api/request-logs/list/?trace_unique_id=${payload.traceId}&start_time=2020-01-01T00:00:00Z`,
      {
        key: a.key,
      },
    );
    assert.equal(res.body.count, Object.keys(payload.expect).length, 'each span once');
    assert.equal(logs.size, Object.keys(payload.expect).length);
    const answer = otlpTypes().response.decode(sends[0]!.bytes);
    assert.equal(sends[0]!.type, 'application/x-protobuf');
    assert.equal(otlpTypes().response.toObject(answer).partialSuccess, undefined);
  });

  it('names every span after its root when the two come in exports read at the same time', async () => {
    // As SimpleSpanProcessor sends them: each span in an export of its own as it ends, the child first.
    const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
    const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);
    const exportOf = (traceId: string, spanId: string, name: string, parent?: string) =>
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'race-app' } }] },
            scopeSpans: [
              {
                scope: { name: 'race' },
                spans: [
                  {
                    traceId,
                    spanId,
                    ...(parent ? { parentSpanId: parent } : {}),
                    name,
                    kind: 1,
                    startTimeUnixNano: ns(Date.now() - 2000),
                    endTimeUnixNano: ns(Date.now() - 1000),
                    attributes: [],
                    status: { code: 0 },
                  },
                ],
              },
            ],
          },
        ],
      });
    const traces = Array.from({ length: 20 }, (_, i) => ({ traceId: hex(16), rootId: hex(8), root: `workflow-${i}` }));
    await Promise.all(
      traces.flatMap(({ traceId, rootId, root }) => [
        post(t, a.key, exportOf(traceId, hex(8), 'step', rootId), 'application/json'),
        post(t, a.key, exportOf(traceId, rootId, root), 'application/json'),
      ]),
    );
    for (const { traceId, root } of traces) {
      const logs = await traceLogsBySpanName(t, a, traceId);
      assert.equal(logs.get('step')?.span_workflow_name, root, `the step of ${root}`);
      assert.equal(logs.get(root)?.span_workflow_name, root);
    }
  });

  it("keeps organizations apart: the same span ids are another organization's own logs", async () => {
    const payload = openInferencePayload();
    for (const who of [a, b]) {
      const res = await post(t, who.key, JSON.stringify(payload.body), 'application/json');
      assert.equal(res.status, 200);
    }
    const ofA = await traceLogsBySpanName(t, a, payload.traceId);
    const ofB = await traceLogsBySpanName(t, b, payload.traceId);
    assert.equal(ofA.size, Object.keys(payload.expect).length);
    assert.equal(ofB.size, Object.keys(payload.expect).length);
    const ids = (m: Map<string, Log>) => [...m.values()].map((l) => l.unique_id);
    assert.ok(!ids(ofA).some((id) => ids(ofB).includes(id)));
    const noKey = await fetch(`${t.baseUrl}/api/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload.body),
    });
    assert.equal(noKey.status, 401);
  });

  it("refuses bodies that are not OTLP in OTLP's form, names the spans it could not read, cuts what is too long", async () => {
    const garbage = await post(t, a.key, Buffer.from([0xff, 0xff, 0xff, 0x01, 0x02]), 'application/x-protobuf');
    assert.equal(garbage.status, 400);
    assert.equal(garbage.type, 'application/x-protobuf');
    const status = otlpTypes().status.toObject(otlpTypes().status.decode(garbage.bytes));
    assert.equal(status.code, 3);
    assert.match(String(status.message), /not an OTLP trace export/);

    const badJson = await post(t, a.key, '{"resourceSpans": [', 'application/json');
    assert.equal(badJson.status, 400);
    const json = JSON.parse(badJson.bytes.toString());
    assert.equal(json.code, 3);
    assert.equal(json.error.code, 'invalid_otlp');
    assert.equal(json.error.param, 'body');

    const notGzip = await post(t, a.key, '{}', 'application/json', { 'content-encoding': 'gzip' });
    assert.equal(notGzip.status, 400);
    const wrongType = await post(t, a.key, 'hello', 'text/plain');
    assert.equal(wrongType.status, 415);

    const payload = genAiPayload();
    const spans = (payload.body.resourceSpans[0]!.scopeSpans[0]!.spans as Log[]).slice();
    spans.push({ ...spans[0], spanId: '', name: 'no id' });
    spans.push({
      ...spans[0],
      spanId: 'aaaaaaaaaaaaaaa2',
      name: 'far future',
      endTimeUnixNano: '99999999999999999999999',
    });
    spans.push({
      ...spans[0],
      spanId: 'aaaaaaaaaaaaaaa1',
      name: 'long model',
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
        { key: 'gen_ai.request.model', value: { stringValue: 'm'.repeat(5000) } },
      ],
    });
    const partial = {
      resourceSpans: [{ ...payload.body.resourceSpans[0], scopeSpans: [{ scope: { name: 'x' }, spans }] }],
    };
    const res = await post(t, a.key, JSON.stringify(partial), 'application/json');
    assert.equal(res.status, 200);
    const answer = JSON.parse(res.bytes.toString());
    assert.equal(answer.partialSuccess.rejectedSpans, '2');
    assert.match(answer.partialSuccess.errorMessage, /no id.*spanId/);
    assert.match(answer.partialSuccess.errorMessage, /far future/);
    const logs = await traceLogsBySpanName(t, a, payload.traceId);
    assert.equal(logs.size, Object.keys(payload.expect).length + 1, 'the readable spans stored');
    assert.equal(String(logs.get('long model')!.model).length, 120, 'an oversized value cut, the span kept');
  });
});
