/** Reading span attributes through fallback chains: the first name present, in the order given. */
import type { Attributes } from './otlp-decode.js';

export function textOf(a: Attributes, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = a.get(name);
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  }
  return undefined;
}

export function numberOf(a: Attributes, ...names: string[]): number | undefined {
  for (const name of names) {
    const v = a.get(name);
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (Number.isFinite(n)) return n;
  }
  return undefined;
}

export function booleanOf(a: Attributes, ...names: string[]): boolean | undefined {
  for (const name of names) {
    const v = a.get(name);
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
  }
  return undefined;
}

/** A value that may be JSON text (as most instrumentations write structured attributes) or already structured. */
export function jsonOf(a: Attributes, ...names: string[]): unknown {
  for (const name of names) {
    const v = a.get(name);
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }
  return undefined;
}

/**
 * Attributes flattened by index (`gen_ai.prompt.0.role`, `llm.input_messages.1.message.content`): for
 * `prefix`, each index's fields by the rest of their name, in index order.
 */
export function indexed(a: Attributes, prefix: string): Map<string, unknown>[] {
  const byIndex = new Map<number, Map<string, unknown>>();
  const head = `${prefix}.`;
  for (const [key, value] of a) {
    if (!key.startsWith(head)) continue;
    const rest = key.slice(head.length);
    const dot = rest.indexOf('.');
    if (dot <= 0) continue;
    const index = Number(rest.slice(0, dot));
    if (!Number.isInteger(index) || index < 0) continue;
    const fields = byIndex.get(index) ?? new Map<string, unknown>();
    fields.set(rest.slice(dot + 1), value);
    byIndex.set(index, fields);
  }
  return [...byIndex.entries()].sort((x, y) => x[0] - y[0]).map(([, fields]) => fields);
}
