/**
 * The order of a dashboard top-N table (Top models, customers, keys): by any of its columns, either way,
 * written as the list's sort is ("-cost": most first, "name": A to Z). Pure. The "Others" row (every
 * group past the top N) stays last, and a value not known (a cost with no price, no latency) sorts after
 * the known ones whichever the direction, so that ranking by cost shows the costly models first.
 */
export const TOP_COLUMNS = ['name', 'requests', 'errors', 'cost', 'latency'] as const;
export type TopColumn = (typeof TOP_COLUMNS)[number];

export interface TopSort {
  column: TopColumn;
  descending: boolean;
}

/** The server's own order: the most requests first. */
export const DEFAULT_TOP_SORT: TopSort = { column: 'requests', descending: true };

export interface TopRow {
  name: string;
  other: boolean;
  requests: number;
  /** The share of failed requests, 0 to 1; null without requests. */
  errors: number | null;
  cost: number | null;
  latency: number | null;
}

export const topSortText = (s: TopSort): string => `${s.descending ? '-' : ''}${s.column}`;

/** A sort written as text, or the default when the text is not one. */
export function parseTopSort(text: unknown): TopSort {
  if (typeof text !== 'string') return DEFAULT_TOP_SORT;
  const descending = text.startsWith('-');
  const column = (descending ? text.slice(1) : text) as TopColumn;
  return TOP_COLUMNS.includes(column) ? { column, descending } : DEFAULT_TOP_SORT;
}

/**
 * The sort after a click on `column`'s header: the other way round when it is the current one; else
 * names A to Z first, numbers largest first (the most requests, errors, cost or latency).
 */
export function nextTopSort(current: TopSort, column: TopColumn): TopSort {
  if (current.column === column) return { column, descending: !current.descending };
  return { column, descending: column !== 'name' };
}

/** The rows in the sort's order (a stable sort: ties keep the server's order, the most requests first). */
export function sortTopRows<R extends TopRow>(rows: readonly R[], sort: TopSort): R[] {
  const sign = sort.descending ? -1 : 1;
  const compare = (a: R, b: R): number => {
    if (a.other !== b.other) return a.other ? 1 : -1;
    if (sort.column === 'name') return sign * a.name.localeCompare(b.name);
    const x = a[sort.column];
    const y = b[sort.column];
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return sign * (x - y);
  };
  return [...rows].sort(compare);
}
