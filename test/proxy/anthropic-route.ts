/**
 * What the tests of POST /api/anthropic/v1/messages share: gatelog pointed at a fake Anthropic (which
 * accepts fields it does not know, as a newer Anthropic would: the route forwards them), a tenant whose
 * organization registered an Anthropic key, the official client noting what it sent and the log each
 * answer named (its stream helpers hide the response), and a raw POST to the route.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { DEFAULT_TEXT } from '../support/fake-anthropic-answers.js';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.js';
import { logWhenWritten } from '../support/proxy-app.js';

export const HELLO = DEFAULT_TEXT.join('');
export const PROVIDER_KEY = 'sk-ant-registered-provider-key-1234';
export const MODEL = 'claude-sonnet-4-20250514';
export const SYSTEM = 'You are terse.';
export const USER = { role: 'user', content: 'Say hello.' } as const;
export { SONNET } from '../support/claude-prices.js';
/** The parameters gatelog takes for itself and never sends to Anthropic. */
export const PLATFORM_PARAMS = [
  'customer_identifier',
  'customer_email',
  'thread_identifier',
  'request_breakdown',
  'customer_credentials',
  'disable_log',
];

export interface AnthropicRouteApp {
  fake: FakeAnthropic;
  t: TestApp;
  a: Tenant;
  /** Anthropic's client holding the tenant's key, pointed at the route. */
  client: Anthropic;
  close(): Promise<void>;
}

/*
 * The app of the running describe block, as live bindings: a test file imports them and its tests read
 * them as they would their block's own variables (node:test runs a file's blocks one after the other).
 */
export let fake: FakeAnthropic;
export let t: TestApp;
export let a: Tenant;
export let client: Anthropic;
/** The headers the official client sent last, and the log its answer named (its helpers hide the response). */
export let sentHeaders: Headers | null = null;
export let notedLogId: string | null = null;

/**
 * Hooks the describe block it is called in to gatelog and a fake Anthropic, started with `env`;
 * `started` receives them once they run.
 */
export function useAnthropicRoute(
  env: Record<string, string>,
  started: (app: AnthropicRouteApp) => void = () => {},
): void {
  let app: AnthropicRouteApp;
  before(async () => {
    const fakeAnthropic = await startFakeAnthropic({ unknownFields: 'accept' });
    const gatelog = await startApp({ env: { GATELOG_ANTHROPIC_BASE_URL: fakeAnthropic.baseUrl, ...env } });
    const tenant = await gatelog.tenant();
    const registered = await api(gatelog.baseUrl, 'POST', '/api/provider-keys/', {
      key: tenant.key,
      body: { provider: 'anthropic', api_key: PROVIDER_KEY },
    });
    assert.equal(registered.status, 201, registered.text);
    const noting = new Anthropic({
      apiKey: tenant.key,
      baseURL: `${gatelog.baseUrl}/api/anthropic`,
      maxRetries: 0,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        sentHeaders = new Headers(init?.headers);
        const res = await fetch(url, init);
        notedLogId = res.headers.get('x-gatelog-log-id');
        return res;
      },
    });
    const close = async () => {
      await gatelog.close();
      await fakeAnthropic.close();
    };
    app = { fake: fakeAnthropic, t: gatelog, a: tenant, client: noting, close };
    ({ fake, t, a, client } = app);
    started(app);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.message();
    notedLogId = null;
    sentHeaders = null;
  });
  after(() => app.close());
}

/** POSTs a JSON body to the route with the tenant's key as x-api-key, and `headers`. */
export const post = (body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${t.baseUrl}/api/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': a.key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });

/** The log an answer names, once written. */
export const logOf = (id: string | null) => logWhenWritten(t, a, id);

/** The last exchange the fake saw, and the JSON body it was sent. */
export const last = () => fake.exchanges.at(-1)!;
export const sentJson = () => last().request.json!;
/** The bytes of the last exchange's events, as Anthropic wrote them. */
export const sentText = () =>
  last()
    .sent.map((e) => e.text)
    .join('');
