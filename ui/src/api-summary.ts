/** The analytics call (POST /api/request-logs/summary/, docs/api.md "Analytics") for the charts. */
import { call } from './api';
import type { Summary, SummaryBody } from './lib/summary';

export const summarize = (key: string, body: SummaryBody) => call<Summary>(key, 'POST', 'request-logs/summary/', body);

/** The zone the buckets follow: the browser's own when times read local, else UTC. */
export const bucketZone = (zone: 'local' | 'utc'): string =>
  zone === 'utc' ? 'UTC' : (Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC');
