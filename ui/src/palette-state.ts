/** What the ⌘K palette shares with the rest of the UI: the explorer actions it asks for, the logs opened lately. */
import { signal } from '@preact/signals';

/** An explorer action asked for from the palette; the explorer takes it (and sets this back to null). */
export const explorerAction = signal<'export' | 'dataset' | null>(null);

const RECENT_STORE = 'gatelog.recentLogs';
const RECENT_MAX = 10;

export function recentLogs(): string[] {
  try {
    const ids = JSON.parse(localStorage.getItem(RECENT_STORE) ?? '[]') as unknown;
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

export function remember(id: string): void {
  const next = [id, ...recentLogs().filter((x) => x !== id)].slice(0, RECENT_MAX);
  localStorage.setItem(RECENT_STORE, JSON.stringify(next));
}
