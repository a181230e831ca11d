/**
 * OTLP/HTTP trace bodies — protobuf or JSON — read into one plain shape: spans with their resource's and
 * scope's names, ids as lower-case hex, attributes as JavaScript values, times as epoch milliseconds.
 * JSON follows OTLP's rules (hex ids, lowerCamelCase names; snake_case names are read too). Every text a
 * span holds is stored as it is, but for NUL (which PostgreSQL text cannot hold): U+FFFD in its place,
 * on both databases, so that one character never costs an export.
 */
import { TimeSlice } from '../util/time-slice.js';
import { withoutNul } from '../util/nul.js';
import { OtlpBodyError } from './otlp-body-error.js';
import type { ByteRange } from './otlp-layout.js';
import { otlpTypes } from './otlp-proto.js';
import { scanJson } from './otlp-scan-json.js';
import { scanProtobuf } from './otlp-scan-protobuf.js';
import type { SpanRejections } from './span-rejections.js';

/** Attribute values: text, numbers, booleans, arrays and objects (a kvlist), as OTLP's AnyValue holds. */
export type Attributes = Map<string, unknown>;

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** Epoch milliseconds (fractions kept). */
  startMs: number;
  endMs: number;
  attributes: Attributes;
  events: { name: string; timeMs: number; attributes: Attributes }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  resource: Attributes;
  scope: string;
}

export { OtlpBodyError };

/** A span that cannot be read (no ids, no times): counted as rejected, the others go on. */
interface RejectedSpan {
  reason: string;
}

type Obj = Record<string, unknown>;
type Format = 'protobuf' | 'json';

/** The end of year 9999: a later time is no date a log can hold. */
const LATEST_MS = 253_402_300_799_999;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A field by its lowerCamelCase name, or its snake_case one. */
function field(o: Obj, camel: string): unknown {
  if (camel in o) return o[camel];
  return o[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** Text as it can be stored on either database (see util/nul.ts). */
const text = (v: unknown): string => (typeof v === 'string' ? withoutNul(v) : '');
/**
 * A JSON scalar, or undefined: an object given where OTLP wants a number or text is not converted,
 * since one whose `toString` is data (`{"toString": 1}`) throws when JavaScript converts it.
 */
const scalar = (v: unknown): string | number | boolean | undefined =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : undefined;

/**
 * The spans of an export, and those rejected. The body is scanned first (OTLP_BOUNDS: a body past them
 * is an OtlpBodyError, spans past them are rejected), then each piece kept is decoded on its own, the
 * event loop given a turn every few milliseconds.
 */
export async function readExport(
  body: Buffer,
  format: Format,
): Promise<{ spans: OtlpSpan[]; rejected: SpanRejections }> {
  const layout = await (format === 'json' ? scanJson(body) : scanProtobuf(body));
  const decode = format === 'json' ? jsonPiece(body) : protobufPiece(body);
  const { rejected } = layout;
  const spans: OtlpSpan[] = [];
  const slice = new TimeSlice();
  for (const r of layout.resources) {
    const resourceObj = r.resource ? decode('resource', r.resource) : null;
    const resource = attributesOf(isObj(resourceObj) ? field(resourceObj, 'attributes') : undefined);
    for (const s of r.scopes) {
      const scopeObj = s.scope ? decode('scope', s.scope) : null;
      const scope = isObj(scopeObj) ? text(scopeObj.name) : '';
      for (const range of s.spans) {
        await slice.pause();
        const raw = decode('span', range);
        const span = isObj(raw) ? spanOf(raw, resource, scope) : { reason: 'a span is an object' };
        if ('reason' in span) rejected.add(span.reason);
        else spans.push(span);
      }
    }
  }
  return { spans, rejected };
}

type Piece = 'resource' | 'scope' | 'span';
type PieceDecoder = (piece: Piece, range: ByteRange) => unknown;

function protobufPiece(body: Buffer): PieceDecoder {
  const types = otlpTypes();
  return (piece, { start, end }) => {
    const type = types[piece];
    try {
      return type.toObject(type.decode(body.subarray(start, end)), { longs: String, arrays: true });
    } catch (err) {
      throw new OtlpBodyError(`not an OTLP ExportTraceServiceRequest: ${(err as Error).message}`);
    }
  };
}

function jsonPiece(body: Buffer): PieceDecoder {
  // The scan has validated the whole body as JSON: each piece parses.
  return (_piece, { start, end }) => JSON.parse(body.toString('utf8', start, end)) as unknown;
}

function spanOf(raw: Obj, resource: Attributes, scope: string): OtlpSpan | RejectedSpan {
  const traceId = idOf(field(raw, 'traceId'), 16);
  const spanId = idOf(field(raw, 'spanId'), 8);
  const name = text(raw.name);
  if (!traceId || /^0+$/.test(traceId)) return { reason: `span '${name}': traceId must be 16 bytes, not all zero` };
  if (!spanId || /^0+$/.test(spanId)) return { reason: `span '${name}': spanId must be 8 bytes, not all zero` };
  const parent = idOf(field(raw, 'parentSpanId'), 8);
  const start = nanosToMs(field(raw, 'startTimeUnixNano'));
  const end = nanosToMs(field(raw, 'endTimeUnixNano'));
  if (start === null || end === null || start <= 0 || start > LATEST_MS || end > LATEST_MS) {
    return { reason: `span '${name}' (${spanId}): startTimeUnixNano and endTimeUnixNano are required` };
  }
  const status = field(raw, 'status');
  return {
    traceId,
    spanId,
    parentSpanId: parent && !/^0+$/.test(parent) ? parent : null,
    name,
    startMs: start,
    endMs: Math.max(start, end),
    attributes: attributesOf(field(raw, 'attributes')),
    events: list(field(raw, 'events'))
      .filter(isObj)
      .map((e) => ({
        name: text(e.name),
        timeMs: nanosToMs(field(e, 'timeUnixNano')) ?? start,
        attributes: attributesOf(field(e, 'attributes')),
      })),
    statusCode: isObj(status) ? statusCodeOf(field(status, 'code')) : 0,
    statusMessage: isObj(status) ? text(status.message) : '',
    resource,
    scope,
  };
}

function statusCodeOf(v: unknown): number {
  if (v === 'STATUS_CODE_ERROR') return 2;
  if (v === 'STATUS_CODE_OK') return 1;
  return typeof v === 'number' ? v : Number(scalar(v)) || 0;
}

/** Hex of `bytes` bytes from protobuf bytes or OTLP/JSON's hex (base64, as generic protobuf JSON writes it, too). */
function idOf(v: unknown, bytes: number): string | null {
  if (v instanceof Uint8Array) return v.length === bytes ? Buffer.from(v).toString('hex') : null;
  if (typeof v !== 'string' || v === '') return null;
  if (v.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(v)) return v.toLowerCase();
  const decoded = Buffer.from(v, 'base64');
  return decoded.length === bytes ? decoded.toString('hex') : null;
}

/** Epoch ms from a fixed64 of nanoseconds (a decimal string, or a number in JSON). */
function nanosToMs(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v / 1e6;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) return null;
  const ns = BigInt(v);
  return Number(ns / 1000n) / 1000;
}

function attributesOf(v: unknown): Attributes {
  const out: Attributes = new Map();
  for (const kv of list(v)) {
    if (isObj(kv) && typeof kv.key === 'string') out.set(withoutNul(kv.key), anyValue(kv.value));
  }
  return out;
}

/** OTLP's AnyValue as a JavaScript value; int64 beyond 2^53 stays text. */
function anyValue(v: unknown): unknown {
  if (!isObj(v)) return null;
  const string = field(v, 'stringValue');
  if (string !== undefined) return withoutNul(String(scalar(string) ?? ''));
  const bool = field(v, 'boolValue');
  if (bool !== undefined) return Boolean(bool);
  const int = field(v, 'intValue');
  if (int !== undefined) {
    const n = Number(scalar(int));
    return Number.isSafeInteger(n) ? n : String(scalar(int) ?? '');
  }
  const double = field(v, 'doubleValue');
  if (double !== undefined) return Number(scalar(double));
  const array = field(v, 'arrayValue');
  if (array !== undefined) return list(isObj(array) ? array.values : undefined).map(anyValue);
  const kvlist = field(v, 'kvlistValue');
  if (kvlist !== undefined) return Object.fromEntries(attributesOf(isObj(kvlist) ? kvlist.values : undefined));
  const bytes = field(v, 'bytesValue');
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString('base64');
  if (typeof bytes === 'string') return bytes;
  return null;
}
