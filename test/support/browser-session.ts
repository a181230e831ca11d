/**
 * One browser session for a suite of web UI tests: a gatelog of its own (startApp, or what `start`
 * gives), a tenant's key, logs seeded through the logging API, Chromium, and pages signed in with the
 * key. Every page it opens reports its script and console errors to `problems`, which a suite asserts
 * at its end. Called inside a `describe` (with `{ skip: withoutChromium }`), it registers the suite's
 * `before` and `after`: what it holds is there once the suite's tests run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium, watchedPage } from './chromium.js';
import { api, type ApiResponse, startApp, type TestApp } from './harness.js';
import { type ProxyTestApp, startProxyApp } from './proxy-app.js';

let shots: string | undefined;

/** Where a screenshot named `name` goes: GATELOG_UI_SCREENSHOTS, or a temporary directory. */
export function screenshotPath(name: string): string {
  shots ??= process.env.GATELOG_UI_SCREENSHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-ui-'));
  return path.join(shots, name);
}

/** What a session shows the browser: a gatelog, the key to sign in with, how to stop both. */
export interface Served {
  readonly t: TestApp;
  readonly key: string;
  /** Where the browser goes when not gatelog's own address (a proxy in front of it). */
  readonly browserUrl?: () => string;
  close(): Promise<void>;
}

/** A new gatelog on its own database, with one tenant's key. */
export async function servedApp(): Promise<Served> {
  const t = await startApp();
  const key = (await t.tenant()).key;
  return { t, key, close: () => t.close() };
}

/**
 * A gatelog in front of the fake provider (startProxyApp, with `env` added): `p` calls it through the
 * official client.
 */
export async function servedProxyApp(env: Record<string, string> = {}): Promise<Served & { p: ProxyTestApp }> {
  const p = await startProxyApp(env);
  return { p, t: p.t, key: p.a.key, close: () => p.close() };
}

/** What shows once a page has loaded: a text on it, or a locator of it. */
export type Shown = string | RegExp | ((page: Page) => Locator);

export interface PageOptions {
  viewport?: { width: number; height: number };
  /** Where the page's problems go (default: the session's). */
  problems?: string[];
}

export interface SignInOptions extends PageOptions {
  /** Stored as the UI's theme before signing in (a reload reads it). */
  theme?: string;
  /** Another key than the session's. */
  key?: string;
  /** What shows once signed in; not waited for when absent. */
  ready?: Shown;
}

export interface BrowserSession<S extends Served = Served> {
  readonly served: S;
  readonly t: TestApp;
  readonly key: string;
  readonly browser: Browser;
  /** Script errors and console errors of every page opened with the session's list. */
  readonly problems: string[];
  /** The problems but the failed calls a suite expects (those whose text `expected` matches). */
  problemsExcept(expected: RegExp): string[];
  /** The browser's address of a UI path (`?v=settings` → …/ui/?v=settings). */
  ui(query?: string): string;
  /** A new page, its problems watched. */
  page(options?: PageOptions): Promise<Page>;
  /** Opens the UI at `query` on `page` and signs in with the key. */
  signIn(page: Page, query?: string, options?: SignInOptions): Promise<void>;
  /** A new page signed in at `query`. */
  signedIn(query?: string, options?: SignInOptions): Promise<Page>;
  /** One call to gatelog's API with the session's key (or `options.key`). */
  api(method: string, path: string, options?: { body?: unknown; key?: string }): Promise<ApiResponse>;
  /** Seeds logs through the logging API (as the key's organization, or `key`'s), once written: their ids. */
  seedLogs(logs: unknown[], key?: string): Promise<string[]>;
}

/** Waits for what `shown` names on `page`. */
export function waitShown(page: Page, shown: Shown): Promise<void> {
  const locator = typeof shown === 'function' ? shown(page) : page.getByText(shown);
  return locator.waitFor();
}

/** Goes to the UI's `url` on a signed-in page and waits for what shows. */
export async function openAndWait(page: Page, url: string, shown: Shown): Promise<void> {
  await page.goto(url);
  await waitShown(page, shown);
}

/**
 * Signed in on a screen with the header's links: the header's Settings link shows (a screen may link
 * to Settings too, as the annotation screen does when there are no evaluators).
 */
export const settingsLink = (page: Page) =>
  page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' });
/** The explorer's table of logs. */
export const logsGrid = (page: Page) => page.getByRole('grid', { name: 'Logs' });

/**
 * The session of the suite it is called in: registers the suite's `before` (start, seed, launch) and
 * `after` (close the browser, then gatelog), and returns what the tests read once `before` has run.
 */
export function browserSession<S extends Served = Served>(
  options: {
    /** Starts what the browser is shown (default: servedApp()). */
    start?: () => Promise<S>;
    /** Runs before Chromium is launched: logs and whatever else the suite reads. */
    seed?: (session: BrowserSession<S>) => Promise<unknown>;
  } = {},
): BrowserSession<S> {
  let served: S | undefined;
  let browser: Browser | undefined;
  const problems: string[] = [];
  const need = <T>(value: T | undefined, what: string): T => {
    assert.ok(value !== undefined, `the browser session's ${what} is used before its suite started`);
    return value;
  };

  const session: BrowserSession<S> = {
    get served() {
      return need(served, 'app');
    },
    get t() {
      return need(served, 'app').t;
    },
    get key() {
      return need(served, 'app').key;
    },
    get browser() {
      return need(browser, 'browser');
    },
    problems,
    problemsExcept: (expected) => problems.filter((p) => !expected.test(p)),
    ui: (query = '') => {
      const s = need(served, 'app');
      return `${s.browserUrl?.() ?? s.t.baseUrl}/ui/${query}`;
    },
    page: (opts = {}) =>
      watchedPage(session.browser, opts.problems ?? problems, opts.viewport ? { viewport: opts.viewport } : undefined),
    signIn: async (page, query = '', opts = {}) => {
      await page.goto(session.ui(query));
      if (opts.theme !== undefined) {
        await page.evaluate(`localStorage.setItem('gatelog.theme', ${JSON.stringify(opts.theme)})`);
        await page.reload();
      }
      await page.getByLabel('API key').fill(opts.key ?? session.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      if (opts.ready !== undefined) await waitShown(page, opts.ready);
    },
    signedIn: async (query = '', opts = {}) => {
      const page = await session.page(opts);
      await session.signIn(page, query, opts);
      return page;
    },
    api: (method, path, opts = {}) => api(session.t.baseUrl, method, path, { key: session.key, ...opts }),
    seedLogs: async (logs, key = session.key) => {
      const created = await session.api('POST', '/api/request-logs/batch/', { key, body: { logs } });
      assert.equal(created.status, 201, created.text);
      await session.t.flush();
      return created.body.unique_ids as string[];
    },
  };

  before(async () => {
    served = await (options.start ?? (servedApp as () => Promise<S>))();
    await options.seed?.(session);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await served?.close();
  });

  return session;
}
