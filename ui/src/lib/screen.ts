import { isKeySort, type KeySort } from './key-list.js';

/**
 * Which screen a query string shows: the log explorer (no `v`), the datasets (`v=datasets`), one dataset
 * (`v=dataset&id=…`), one dataset's annotation (`v=annotate&id=…&item=N`), the settings (`v=settings`:
 * provider keys and evaluators), the organization's keys (`v=keys`, with `sort` and `revoked=hide`), its
 * budgets (`v=budgets`), the dashboard (`v=dashboard`, with the explorer's window and filters), the
 * sessions (`v=sessions`, with the explorer's window and filters and the open session: lib/sessions.ts),
 * or one trace as a tree (`v=trace&id=<trace id>`). Pure.
 */
export type Screen =
  | { kind: 'logs' }
  | { kind: 'datasets'; page: number }
  | { kind: 'dataset'; id: string; page: number }
  | { kind: 'annotate'; id: string; item: number }
  | { kind: 'settings' }
  | { kind: 'keys'; sort: KeySort; showRevoked: boolean }
  | { kind: 'budgets' }
  | { kind: 'dashboard' }
  | { kind: 'sessions' }
  | { kind: 'trace'; id: string };

const positive = (text: string | null) => {
  const n = Number(text ?? '1');
  return Number.isInteger(n) && n >= 1 ? n : 1;
};

export function parseScreen(search: string): Screen {
  const q = new URLSearchParams(search);
  const id = q.get('id');
  switch (q.get('v')) {
    case 'datasets':
      return { kind: 'datasets', page: positive(q.get('page')) };
    case 'dataset':
      return id ? { kind: 'dataset', id, page: positive(q.get('page')) } : { kind: 'datasets', page: 1 };
    case 'annotate':
      return id ? { kind: 'annotate', id, item: positive(q.get('item')) } : { kind: 'datasets', page: 1 };
    case 'settings':
      return { kind: 'settings' };
    case 'keys': {
      const sort = q.get('sort');
      return { kind: 'keys', sort: isKeySort(sort) ? sort : 'used', showRevoked: q.get('revoked') !== 'hide' };
    }
    case 'budgets':
      return { kind: 'budgets' };
    case 'dashboard':
      return { kind: 'dashboard' };
    case 'sessions':
      return { kind: 'sessions' };
    case 'trace':
      return id ? { kind: 'trace', id } : { kind: 'logs' };
    default:
      return { kind: 'logs' };
  }
}

/** The query string of a screen other than the log explorer (whose state lib/view-state.ts writes). */
export function formatScreen(screen: Exclude<Screen, { kind: 'logs' }>): string {
  const q = new URLSearchParams({ v: screen.kind });
  if (
    screen.kind === 'settings' ||
    screen.kind === 'dashboard' ||
    screen.kind === 'budgets' ||
    screen.kind === 'sessions'
  )
    return `?${q.toString()}`;
  if (screen.kind === 'keys') {
    // The defaults (last use first, revoked keys shown) are not written.
    if (screen.sort !== 'used') q.set('sort', screen.sort);
    if (!screen.showRevoked) q.set('revoked', 'hide');
    return `?${q.toString()}`;
  }
  if (screen.kind !== 'datasets') q.set('id', screen.id);
  if (screen.kind === 'trace') return `?${q.toString()}`;
  if (screen.kind === 'annotate') q.set('item', String(screen.item));
  else if (screen.page !== 1) q.set('page', String(screen.page));
  return `?${q.toString()}`;
}
