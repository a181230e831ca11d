/**
 * The explorer of the layout, filter and outage tests: 60 logs of the last minute whose names and values
 * are long or wide (long model and customer names, costs from $0.0000000123 to $1,234.5,
 * long prompts), one of them failed, and two older logs that say "zebra" (2 and 10 days back, outside
 * the default hour); and a page signed in on them.
 */
import type { Page } from 'playwright-core';
import { type BrowserSession, logsGrid } from './browser-session.js';

/** The logs, sent at `now`. */
export function wideLogs(now: number): unknown[] {
  const long = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor ';
  const logs = Array.from({ length: 60 }, (_, i) => ({
    model: i % 3 === 0 ? 'gpt-4o' : i % 3 === 1 ? 'gpt-4o-mini' : 'text-embedding-3-large-deployment-eu-west',
    input: [{ role: 'user', content: `question ${i} ${long.repeat(4)}` }],
    output: { role: 'assistant', content: `answer ${i} ${long.repeat(4)}` },
    usage: { prompt_tokens: 1000 + i * 997, completion_tokens: 5 },
    customer_identifier: `customer-${i % 4}@a-rather-long-company-name.example.com`,
    status_code: i === 7 ? 500 : 200,
    ...(i === 7 ? { error_message: 'upstream, exploded', error_code: 'upstream_error' } : {}),
    cost: [0.0158, 12.3, 0.000123, 1234.5, 0.000036, 0.0000000123][i % 6],
    latency: 1.234 + i,
    metadata: { feature: i % 2 === 0 ? 'search' : 'chat' },
    timestamp: new Date(now - (60 - i) * 1000).toISOString(),
  }));
  // Older logs that say "zebra": one 2 days ago, one 10 days ago (outside the default hour).
  const older = [2, 10].map((days) => ({
    model: 'gpt-4o',
    input: `an old zebra question from ${days} days ago`,
    output: 'an old answer',
    timestamp: new Date(now - days * 86_400_000).toISOString(),
  }));
  return [...logs, ...older];
}

/**
 * A page signed in at this size and theme, its first 50 logs listed; then, given a `query`, on that
 * screen once its table or its "No logs" shows.
 */
export async function wideExplorer(
  session: BrowserSession,
  viewport: { width: number; height: number },
  theme = 'light',
  query = '',
): Promise<Page> {
  const page = await session.signedIn('', { viewport, theme, ready: '1–50 of 60 logs' });
  if (query) {
    await page.goto(session.ui(query));
    await logsGrid(page)
      .or(page.getByText(/No logs/))
      .first()
      .waitFor();
  }
  return page;
}

/** The failed calls on the console these suites expect: refused filters (400) and gatelog gone. */
export const EXPECTED_FAILED_CALLS =
  /status of 400|ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|Failed to load resource/;
