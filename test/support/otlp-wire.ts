/**
 * OTLP trace bodies built by hand for the traces route's tests: the protobuf form of an OTLP/JSON export,
 * bodies of empty spans by the million, attribute values nested deep in either form, and a POST that
 * returns the answer's bytes.
 */
import crypto from 'node:crypto';
import { otlpTypes } from '../../src/otel/otlp-proto.js';

export const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

/** A protobuf varint. */
export function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
}

/** A length-delimited field (its tag one byte: field numbers below 16). */
export const lenField = (field: number, inner: Buffer) =>
  Buffer.concat([Buffer.from([(field << 3) | 2]), varint(inner.length), inner]);

/** OTLP/JSON's hex ids as the bytes protobufjs's fromObject takes for the binary form. */
export function protobufForm(body: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) =>
    (key === 'traceId' || key === 'spanId' || key === 'parentSpanId') && typeof value === 'string'
      ? Buffer.from(value, 'hex').toString('base64')
      : value,
  );
}

/** An OTLP/JSON export as protobuf bytes. */
export function toProtobuf(body: unknown): Buffer {
  const { request } = otlpTypes();
  return Buffer.from(request.encode(request.fromObject(protobufForm(body))).finish());
}

/** One resource, one scope and `count` empty spans: two bytes each (`12 00`). */
export function emptySpansProtobuf(count: number): Buffer {
  const spans = Buffer.alloc(count * 2);
  for (let i = 0; i < spans.length; i += 2) spans[i] = 0x12;
  return lenField(1, lenField(2, spans));
}

/** The same in OTLP/JSON: three bytes a span (`{},`). */
export function emptySpansJson(count: number): Buffer {
  const head = '{"resourceSpans":[{"scopeSpans":[{"spans":[';
  return Buffer.from(`${head}${'{},'.repeat(count - 1)}{}]}]}]}`);
}

/** A valid span of `traceId` (OTLP/JSON), ended a second ago. */
export function jsonSpan(traceId: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const end = BigInt(Date.now() - 1000) * 1_000_000n;
  return {
    traceId,
    spanId: hex(8),
    name,
    startTimeUnixNano: String(end - 5_000_000n),
    endTimeUnixNano: String(end),
    ...extra,
  };
}

/** An export of these spans under one resource and scope. */
export const exportOf = (spans: unknown[], resourceAttributes: unknown[] = []) => ({
  resourceSpans: [{ resource: { attributes: resourceAttributes }, scopeSpans: [{ scope: { name: 'test' }, spans }] }],
});

/**
 * An export of one valid span of `traceId` whose attribute `nested` is arrays `depth` levels deep around
 * one string, as OTLP/JSON text (JSON.stringify would overflow the stack first).
 */
export function deepValueJson(traceId: string, name: string, depth: number): string {
  const value = `${'{"arrayValue":{"values":['.repeat(depth - 1)}{"stringValue":"deep"}${']}}'.repeat(depth - 1)}`;
  const body = JSON.stringify(exportOf([jsonSpan(traceId, name, { attributes: [{ key: 'nested', value: 'DEEP' }] })]));
  return body.replace('"DEEP"', value);
}

/** The same nesting as protobuf bytes of an AnyValue (5 array_value → 1 values). */
export function deepValueProtobuf(depth: number): Buffer {
  let value = lenField(1, Buffer.from('deep'));
  for (let i = 1; i < depth; i++) value = lenField(5, lenField(1, value));
  return value;
}

/** A protobuf export of one valid span of `traceId` holding an attribute `value` (AnyValue bytes). */
export function protobufSpanWithValue(traceId: string, name: string, value: Buffer): Buffer {
  const { span } = otlpTypes();
  const plain = Buffer.from(span.encode(span.fromObject(protobufForm(jsonSpan(traceId, name)))).finish());
  // Fields of a message may come in any order: the attribute (9) appended after the others.
  const attribute = lenField(9, Buffer.concat([lenField(1, Buffer.from('nested')), lenField(2, value)]));
  return lenField(1, lenField(2, lenField(2, Buffer.concat([plain, attribute]))));
}

export interface TracesAnswer {
  status: number;
  type: string;
  bytes: Buffer;
}

/** POST to /api/v1/traces. */
export async function postTraces(
  baseUrl: string,
  key: string,
  body: Buffer | string,
  type: string,
  headers: Record<string, string> = {},
): Promise<TracesAnswer> {
  const res = await fetch(`${baseUrl}/api/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': type, ...headers },
    body,
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

/** The answer's partialSuccess (either form), or undefined. */
export function partialSuccessOf(answer: TracesAnswer): { rejectedSpans: string; errorMessage: string } | undefined {
  if (answer.type.startsWith('application/json')) return JSON.parse(answer.bytes.toString()).partialSuccess;
  const { response } = otlpTypes();
  const decoded = response.toObject(response.decode(answer.bytes), { longs: String }) as {
    partialSuccess?: { rejectedSpans: string; errorMessage: string };
  };
  return decoded.partialSuccess;
}

/** A 400's message (either form: google.rpc.Status, in JSON with gatelog's envelope). */
export function refusalOf(answer: TracesAnswer): { code: number; message: string } {
  if (answer.type.startsWith('application/json')) {
    const body = JSON.parse(answer.bytes.toString());
    return { code: body.code, message: body.error?.code === 'invalid_otlp' ? body.message : 'no envelope' };
  }
  const { status } = otlpTypes();
  return status.toObject(status.decode(answer.bytes)) as { code: number; message: string };
}
