/**
 * Where the pieces of an OTLP trace export lie in its body — each resource, scope and span to read, as
 * byte ranges — found by a scan of either form (otlp-scan-json.ts, otlp-scan-protobuf.ts) that counts
 * as it goes and decodes nothing. The rules of OTLP_BOUNDS are applied here, alike for both forms: only
 * the spans within them are kept to be decoded, one at a time; the others are counted as rejected.
 */
import { OTLP_BOUNDS, pastBound, type PieceCounts } from './otlp-bounds.js';
import { OtlpBodyError } from './otlp-body-error.js';
import { SpanRejections } from './span-rejections.js';

export interface ByteRange {
  start: number;
  end: number;
}

export interface ScopeLayout {
  scope: ByteRange | null;
  spans: ByteRange[];
}

export interface ResourceLayout {
  resource: ByteRange | null;
  scopes: ScopeLayout[];
}

export interface ExportLayout {
  /** Only those holding spans to read. */
  resources: ResourceLayout[];
  rejected: SpanRejections;
}

export class LayoutBuilder {
  readonly resources: ResourceLayout[] = [];
  readonly rejected = new SpanRejections();
  private values = 0;
  private spans = 0;
  private unread = 0;
  private resource: ResourceLayout | null = null;
  private scope: ScopeLayout | null = null;

  /** One more value in the export; past the bound the export is refused at once. */
  countValue(): void {
    if (++this.values > OTLP_BOUNDS.valuesPerExport) {
      throw new OtlpBodyError(`it holds more than ${OTLP_BOUNDS.valuesPerExport} values`);
    }
  }

  /** An attribute value `depth` levels deep (1: an attribute's own value). */
  checkDepth(depth: number): void {
    if (depth > OTLP_BOUNDS.valueDepth) {
      throw new OtlpBodyError(`an attribute value nests deeper than ${OTLP_BOUNDS.valueDepth} levels`);
    }
  }

  openResourceSpans(): void {
    this.resource = { resource: null, scopes: [] };
  }

  setResource(range: ByteRange, counts: PieceCounts): void {
    const past = pastBound(counts);
    if (past !== null) throw new OtlpBodyError(`a resource holds ${past}`);
    if (this.resource) this.resource.resource = range;
  }

  closeResourceSpans(): void {
    if (this.resource && this.resource.scopes.length > 0) this.resources.push(this.resource);
    this.resource = null;
  }

  openScopeSpans(): void {
    this.scope = { scope: null, spans: [] };
  }

  setScope(range: ByteRange, counts: PieceCounts): void {
    const past = pastBound(counts);
    if (past !== null) throw new OtlpBodyError(`an instrumentation scope holds ${past}`);
    if (this.scope) this.scope.scope = range;
  }

  closeScopeSpans(): void {
    if (this.scope && this.scope.spans.length > 0) this.resource?.scopes.push(this.scope);
    this.scope = null;
  }

  /** Whether the next span is within the export's bound (those past it are only counted). */
  takesSpan(): boolean {
    if (++this.spans <= OTLP_BOUNDS.spansPerExport) return true;
    this.unread++;
    return false;
  }

  /** A span taken (takesSpan), whole and counted: kept to be read, or rejected with why. */
  span(range: ByteRange, counts: PieceCounts): void {
    const past = pastBound(counts);
    if (past !== null) this.rejected.add(`span ${this.spans} of the export holds ${past}`);
    else this.scope?.spans.push(range);
  }

  /** A span taken (takesSpan) that is not a message (OTLP/JSON: not an object). */
  notASpan(): void {
    this.rejected.add('a span is an object');
  }

  finish(): ExportLayout {
    this.rejected.add(
      `spans past the first ${OTLP_BOUNDS.spansPerExport} of an export are not read (${this.unread})`,
      this.unread,
      true,
    );
    return { resources: this.resources, rejected: this.rejected };
  }
}
