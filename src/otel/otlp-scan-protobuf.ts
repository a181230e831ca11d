/**
 * The layout of an OTLP/protobuf trace export, read from the wire format alone: each field's tag and
 * length, descending only into the messages a span's cost lies in (attributes, events, links, their
 * values), every field counted. Nothing is decoded here; protobufjs decodes each piece kept afterwards.
 * A span past the export's bound is skipped whole, and one past a span's bound is not read further: what
 * is scanned is bounded as what is decoded is. Field numbers are those of proto/opentelemetry
 * (trace.proto, common.proto, resource.proto).
 */
import { TimeSlice } from '../util/time-slice.js';
import { noCounts, OTLP_BOUNDS, type PieceCounts } from './otlp-bounds.js';
import { OtlpBodyError } from './otlp-body-error.js';
import { type ByteRange, type ExportLayout, LayoutBuilder } from './otlp-layout.js';

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;
/** Spans scanned between looks at the clock (TimeSlice): each look is an await. */
const SPANS_PER_LOOK = 256;

export async function scanProtobuf(body: Uint8Array): Promise<ExportLayout> {
  const layout = new LayoutBuilder();
  const slice = new TimeSlice();
  let spans = 0;
  const request = new Fields(body, layout, 0, body.length, null);
  // ExportTraceServiceRequest: 1 resource_spans. ResourceSpans: 1 resource, 2 scope_spans.
  // ScopeSpans: 1 scope, 2 spans.
  while (request.next()) {
    if (request.field !== 1) continue;
    const resourceSpans = request.message(null);
    layout.openResourceSpans();
    while (resourceSpans.next()) {
      if (resourceSpans.field === 1) {
        layout.setResource(...attributed(resourceSpans, 1));
      } else if (resourceSpans.field === 2) {
        const scopeSpans = resourceSpans.message(null);
        layout.openScopeSpans();
        while (scopeSpans.next()) {
          if (scopeSpans.field === 1) layout.setScope(...attributed(scopeSpans, 3));
          else if (scopeSpans.field === 2) {
            if (++spans % SPANS_PER_LOOK === 0) await slice.pause();
            if (layout.takesSpan()) span(scopeSpans, layout);
          }
        }
        layout.closeScopeSpans();
      }
    }
    layout.closeResourceSpans();
  }
  return layout.finish();
}

/** Span: 9 attributes, 11 events (3 attributes), 13 links (4 attributes). */
function span(parent: Fields, layout: LayoutBuilder): void {
  const counts = noCounts();
  const span = parent.message(counts);
  while (span.next()) {
    if (span.field === 9) {
      counts.attributes++;
      keyValue(span.message(counts), 0);
    } else if (span.field === 11 || span.field === 13) {
      if (span.field === 11) counts.events++;
      else counts.links++;
      const attributes = span.field === 11 ? 3 : 4;
      const inner = span.message(counts);
      while (inner.next()) if (inner.field === attributes) keyValue(inner.message(counts), 0);
    }
  }
  layout.span(parent.range(), counts);
}

/** A resource or scope (its attributes: field `attributes`), counted. */
function attributed(parent: Fields, attributes: number): [ByteRange, PieceCounts] {
  const counts = noCounts();
  const message = parent.message(counts);
  while (message.next()) {
    if (message.field !== attributes) continue;
    counts.attributes++;
    keyValue(message.message(counts), 0);
  }
  return [parent.range(), counts];
}

/** KeyValue: 2 value, an AnyValue one level deeper than `depth`. */
function keyValue(kv: Fields, depth: number): void {
  while (kv.next()) if (kv.field === 2) anyValue(kv.message(kv.counts), depth + 1);
}

/** AnyValue: 5 array_value (1 values: AnyValue), 6 kvlist_value (1 values: KeyValue). */
function anyValue(value: Fields, depth: number): void {
  value.layout.checkDepth(depth);
  while (value.next()) {
    if (value.field !== 5 && value.field !== 6) continue;
    const array = value.field === 5;
    const list = value.message(value.counts);
    while (list.next()) {
      if (list.field !== 1) continue;
      if (array) anyValue(list.message(list.counts), depth + 1);
      else keyValue(list.message(list.counts), depth);
    }
  }
}

/**
 * The fields of one message, in turn: each counted (in the export, and in `counts` when given), its
 * number, wire type and where its value lies (a length-delimited field's: its bytes).
 */
class Fields {
  field = 0;
  type = 0;
  start = 0;
  end = 0;
  private pos: number;

  constructor(
    private readonly body: Uint8Array,
    readonly layout: LayoutBuilder,
    from: number,
    private readonly limit: number,
    readonly counts: PieceCounts | null,
  ) {
    this.pos = from;
  }

  next(): boolean {
    // A piece past its bound is rejected whole: the rest of it need not be read.
    if (this.pos >= this.limit || (this.counts && this.counts.values > OTLP_BOUNDS.valuesPerSpan)) return false;
    const tag = this.varint();
    this.field = Math.floor(tag / 8);
    this.type = tag % 8;
    if (this.field === 0) throw new OtlpBodyError('a field numbered 0');
    this.layout.countValue();
    if (this.counts) this.counts.values++;
    if (this.type === VARINT) {
      this.start = this.pos;
      while (this.pos < this.limit && this.body[this.pos]! >= 0x80) this.pos++;
      if (this.pos++ >= this.limit) throw truncated();
    } else if (this.type === FIXED64 || this.type === FIXED32) {
      this.start = this.pos;
      this.pos += this.type === FIXED64 ? 8 : 4;
      if (this.pos > this.limit) throw truncated();
    } else if (this.type === LEN) {
      const length = this.varint();
      if (length > this.limit - this.pos) throw truncated();
      this.start = this.pos;
      this.pos += length;
    } else {
      throw new OtlpBodyError(`wire type ${this.type} (groups are not OTLP)`);
    }
    this.end = this.pos;
    return true;
  }

  /** The current field as a message (one OTLP declares a message but sent otherwise is refused). */
  message(counts: PieceCounts | null): Fields {
    if (this.type !== LEN) throw new OtlpBodyError(`field ${this.field} holds a message but is not length-delimited`);
    return new Fields(this.body, this.layout, this.start, this.end, counts);
  }

  range(): ByteRange {
    return { start: this.start, end: this.end };
  }

  /** A varint of at most 32 bits (tags, lengths). */
  private varint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.limit) throw truncated();
      const byte = this.body[this.pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new OtlpBodyError('a tag or length is more than 32 bits');
  }
}

const truncated = () => new OtlpBodyError('a field runs past the end of its message');
