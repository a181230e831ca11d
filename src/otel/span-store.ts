/**
 * What OTLP ingestion (http/routes/otel-traces.ts) reads and changes of the spans stored as logs: their
 * trace and span ids, and the workflow name a trace's spans take from its root span. Ids are looked up
 * 500 at a time, far below either database's bound on parameters.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { chunks } from '../util/chunks.js';

const IDS_PER_QUERY = 500;

/** The stored root span's name of each of these traces that has one, by trace id. */
export async function storedRootNames(
  db: Kysely<Database>,
  organizationId: string,
  traceIds: readonly string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const part of chunks(traceIds, IDS_PER_QUERY)) {
    const roots = await db
      .selectFrom('logs')
      .select(['trace_unique_id', 'span_name'])
      .where('organization_id', '=', organizationId)
      .where('trace_unique_id', 'in', part)
      .where('span_parent_id', 'is', null)
      .execute();
    for (const r of roots) if (r.trace_unique_id && r.span_name) names.set(r.trace_unique_id, r.span_name);
  }
  return names;
}

/** Those of these traces that have a stored span without a workflow name. */
export async function tracesWithUnnamedSpans(
  db: Kysely<Database>,
  organizationId: string,
  traceIds: readonly string[],
): Promise<string[]> {
  const traces: string[] = [];
  for (const part of chunks(traceIds, IDS_PER_QUERY)) {
    const unnamed = await db
      .selectFrom('logs')
      .select('trace_unique_id')
      .distinct()
      .where('organization_id', '=', organizationId)
      .where('trace_unique_id', 'in', part)
      .where('span_workflow_name', 'is', null)
      .execute();
    for (const { trace_unique_id: traceId } of unnamed) if (traceId !== null) traces.push(traceId);
  }
  return traces;
}

/** Gives the trace's stored spans that have no workflow name this one. */
export async function nameUnnamedSpans(
  db: Kysely<Database>,
  organizationId: string,
  traceId: string,
  name: string,
): Promise<void> {
  await db
    .updateTable('logs')
    .set({ span_workflow_name: name })
    .where('organization_id', '=', organizationId)
    .where('trace_unique_id', '=', traceId)
    .where('span_workflow_name', 'is', null)
    .execute();
}

/** Which of these spans the organization has stored already, as "trace\nspan". */
export async function storedSpanKeys(
  db: Kysely<Database>,
  organizationId: string,
  spans: readonly { traceId: string; spanId: string }[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of chunks(spans, IDS_PER_QUERY)) {
    const rows = await db
      .selectFrom('logs')
      .select(['trace_unique_id', 'span_unique_id'])
      .where('organization_id', '=', organizationId)
      .where('trace_unique_id', 'in', [...new Set(part.map((s) => s.traceId))])
      .where(
        'span_unique_id',
        'in',
        part.map((s) => s.spanId),
      )
      .execute();
    for (const r of rows) found.add(`${r.trace_unique_id}\n${r.span_unique_id}`);
  }
  return found;
}
