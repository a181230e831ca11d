/**
 * What one OTLP trace export may hold (docs/api.md "OpenTelemetry", docs/decisions.md). The body is
 * counted as it is scanned, before anything is decoded: a 20 MB body of empty spans (two bytes each)
 * once made ten million objects on the event loop. Each bound is far past what a real exporter sends —
 * SDK batch exporters send at most 512 spans by default (the Collector's batch processor 8,192), and an
 * SDK keeps at most 128 attributes, events and links per span by default.
 */
export const OTLP_BOUNDS = {
  /** Spans read from one export; those after are rejected, counted in partialSuccess. */
  spansPerExport: 10_000,
  /** A span's own attributes; a span with more is rejected (so is a resource or scope with more: a 400). */
  attributesPerSpan: 1_000,
  eventsPerSpan: 1_000,
  linksPerSpan: 1_000,
  /**
   * Every value in a span (each field, attribute, event, link, and each element of an array or map value,
   * at any depth): room for embedding vectors, a bound on what decoding one span costs.
   */
  valuesPerSpan: 100_000,
  /** Every value in the export, read or not: past it the export is a 400, scanned no further. */
  valuesPerExport: 2_000_000,
  /** How deep attribute values (arrays and maps in one another) nest: past it the export is a 400. */
  valueDepth: 32,
  /** How deep OTLP/JSON nests anywhere (attribute values nest 3 levels each): past it, a 400. */
  jsonDepth: 128,
} as const;

/** What a span, resource or scope holds, counted by the scan. */
export interface PieceCounts {
  values: number;
  attributes: number;
  events: number;
  links: number;
}

export const noCounts = (): PieceCounts => ({ values: 0, attributes: 0, events: 0, links: 0 });

/** Which bound `counts` passes, worded for a partialSuccess message or a 400; null within them all. */
export function pastBound(counts: PieceCounts): string | null {
  const b = OTLP_BOUNDS;
  if (counts.attributes > b.attributesPerSpan) return `more than ${b.attributesPerSpan} attributes`;
  if (counts.events > b.eventsPerSpan) return `more than ${b.eventsPerSpan} events`;
  if (counts.links > b.linksPerSpan) return `more than ${b.linksPerSpan} links`;
  if (counts.values > b.valuesPerSpan) return `more than ${b.valuesPerSpan} values`;
  return null;
}
