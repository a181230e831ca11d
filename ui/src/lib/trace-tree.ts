/**
 * A trace's logs as the rows of its tree: each span under its parent (children in start order), with
 * its depth and where it sits on the trace's time axis (fractions of the whole). Pure.
 */
import { MODEL_CALL_TYPES } from './log-types.js';

export interface TraceLog {
  unique_id: string;
  span_unique_id?: unknown;
  span_parent_id?: unknown;
  span_name?: unknown;
  log_type: string;
  model: string;
  timestamp: string;
  latency: number;
  status_code: number;
  cost: number | null;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface TraceRow {
  log: TraceLog;
  name: string;
  depth: number;
  startMs: number;
  durationMs: number;
  /** Start and length as fractions of the trace's whole span of time. */
  left: number;
  width: number;
}

export interface TraceTree {
  rows: TraceRow[];
  startMs: number;
  durationMs: number;
}

/** Log types that are calls to a model (openable as logs with their messages). */
export const CALL_TYPES: ReadonlySet<string> = new Set(MODEL_CALL_TYPES);

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function traceTree(logs: readonly TraceLog[]): TraceTree {
  const spans = logs.map((log) => {
    const endMs = Date.parse(log.timestamp);
    const durationMs = Math.max(0, log.latency * 1000);
    return {
      log,
      id: text(log.span_unique_id) ?? log.unique_id,
      parent: text(log.span_parent_id),
      startMs: endMs - durationMs,
      durationMs,
    };
  });
  if (spans.length === 0) return { rows: [], startMs: 0, durationMs: 0 };
  const startMs = Math.min(...spans.map((s) => s.startMs));
  const endMs = Math.max(...spans.map((s) => s.startMs + s.durationMs));
  const whole = Math.max(endMs - startMs, 1);
  const ids = new Set(spans.map((s) => s.id));
  const children = new Map<string | null, typeof spans>();
  for (const s of spans) {
    // A span whose parent is not in the trace (not sent, or gone) is shown as a root.
    const parent = s.parent !== null && ids.has(s.parent) && s.parent !== s.id ? s.parent : null;
    const list = children.get(parent) ?? [];
    list.push(s);
    children.set(parent, list);
  }
  for (const list of children.values()) list.sort((x, y) => x.startMs - y.startMs || x.id.localeCompare(y.id));
  const rows: TraceRow[] = [];
  const seen = new Set<string>();
  const visit = (parent: string | null, depth: number) => {
    for (const s of children.get(parent) ?? []) {
      if (seen.has(s.id)) continue;
      seen.add(s.id);
      rows.push({
        log: s.log,
        name: text(s.log.span_name) ?? (s.log.model || s.log.log_type),
        depth,
        startMs: s.startMs,
        durationMs: s.durationMs,
        left: (s.startMs - startMs) / whole,
        width: s.durationMs / whole,
      });
      visit(s.id, depth + 1);
    }
  };
  visit(null, 0);
  // Spans whose parents form a loop (no root above them): shown from where the loop is entered.
  for (const s of spans) {
    if (seen.has(s.id)) continue;
    children.set(`loop:${s.id}`, [s]);
    visit(`loop:${s.id}`, 0);
  }
  return { rows, startMs, durationMs: endMs - startMs };
}
