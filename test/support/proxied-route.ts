/**
 * What the tests of the OpenAI-shaped proxied routes (chat completions, the Responses API, audio
 * transcriptions) share: a proxy test app started before a describe block and closed after it, the fake
 * provider set back to plain answers before each test, and calls to a route with the tenant's key.
 *
 * The app is exported as live bindings (`fake`, `t`, `a`, `client`, `noting`): a test file imports them
 * and its tests read them as they would their describe block's own variables. Each describe block that
 * calls useProxyApp sets them before its tests; node:test runs a file's blocks one after the other.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, beforeEach } from 'node:test';
import type OpenAI from 'openai';
import type { FakeUpstream } from './fake-upstream.js';
import type { Tenant, TestApp } from './harness.js';
import { LogNotingClient } from './noting-client.js';
import { logWhenWritten, type ProxyTestApp, startProxyApp } from './proxy-app.js';
import { stallBoundMs } from './responsive.js';

/** The fake provider of the running describe block. */
export let fake: FakeUpstream;
/** gatelog, pointed at `fake`. */
export let t: TestApp;
/** The tenant whose organization registered the provider key. */
export let a: Tenant;
/** The official client, holding the tenant's key. */
export let client: OpenAI;
/** The official client again, noting the log each answer names (the stream helpers hide the response). */
export let noting: LogNotingClient;

/** For the tests of quiet streams and long answers: a short idle timeout, frequent keepalives, a small log cap. */
export const IDLE_MS = 600;
export const LOG_MAX_BYTES = 4096;
export const QUIET_STREAMS_ENV = {
  GATELOG_STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
  GATELOG_STREAM_KEEPALIVE_MS: '100',
  GATELOG_LOG_MAX_BYTES: String(LOG_MAX_BYTES),
};

/** Hooks the describe block it is called in to a proxy test app started with `env`. */
export function useProxyApp(env: Record<string, string> = {}): void {
  let app: ProxyTestApp;
  before(async () => {
    app = await startProxyApp(env);
    ({ fake, t, a, client } = app);
    noting = new LogNotingClient(t.baseUrl, a.key);
  });
  beforeEach(() => {
    fake.behave({ kind: 'ok' });
    fake.chat();
    fake.respond();
    noting.logId = null;
  });
  after(() => app.close());
}

/** POSTs a JSON body to `route` (a path under gatelog's base URL) with the tenant's key, no client between. */
export const postTo = (route: string, body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${t.baseUrl}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

/** The log an answer names, once written. */
export const logOf = (id: string | null) => logWhenWritten(t, a, id);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The client goes away (`controller` aborts its call): waits until gatelog has closed the fake provider's
 * `exchange` before its end (at most 10 s), and asserts it did so at once.
 */
export async function goAwayAndAssertAborted(
  controller: AbortController,
  exchange: { closedEarlyAt: number | null },
): Promise<void> {
  controller.abort();
  const goneAt = performance.now();
  for (let i = 0; i < 1000 && exchange.closedEarlyAt === null; i++) await sleep(10);
  assert.ok(exchange.closedEarlyAt !== null, 'the upstream request was aborted');
  assert.ok(
    // At once: well before the fake's answer would have ended (a busy machine stretches the bound).
    exchange.closedEarlyAt - goneAt < stallBoundMs(100),
    `aborted ${(exchange.closedEarlyAt - goneAt).toFixed(0)} ms later`,
  );
}

/** A log of a call made with disable_log: none of the call's content, only its metrics. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- logs are read as the JSON they are
export function assertContentNotKept(log: any): void {
  assert.equal(log.input, null);
  assert.equal(log.output, null);
  assert.equal(log.prompt_messages, null);
  assert.equal(log.completion_message, null);
}

/**
 * The log of a streamed call whose client went away once it had received `received`: a failed 499 that
 * holds what was sent. Returns the partial completion it holds.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- logs are read as the JSON they are
export function assertClientDisconnected(log: any, received: string[]): string {
  assert.equal(log.status_code, 499);
  assert.equal(log.failed, true);
  assert.equal(log.error_message, 'client disconnected');
  const partial: string = log.completion_message.content;
  assert.ok(partial.startsWith(received.join('')), `the log holds what was sent: ${partial}`);
  return partial;
}

/** An amount equal to the expected one but for floating-point rounding. */
export const near = (actual: number, expected: number, what: string) =>
  assert.ok(
    Math.abs(actual - expected) <= 1e-9 + Math.abs(expected) * 1e-6,
    `${what}: ${actual}, expected ${expected}`,
  );

/** Per million tokens, from the price catalog (OpenAI's public prices). */
export const OPENAI_PRICES = {
  'gpt-4o-mini': { input: 0.15, cached: 0.075, output: 0.6 },
  'gpt-4o': { input: 2.5, cached: 1.25, output: 10 },
};

/** The parameters gatelog takes for itself and never sends to an OpenAI-shaped provider. */
export const OPENAI_PLATFORM_PARAMS = [
  'customer_identifier',
  'metadata',
  'request_breakdown',
  'customer_credentials',
  'disable_log',
];

/** The fields of a request_breakdown. */
export const BREAKDOWN_FIELDS = [
  'prompt_tokens',
  'completion_tokens',
  'cost',
  'prompt_messages',
  'completion_message',
  'model',
  'cached',
  'timestamp',
  'status_code',
  'stream',
  'latency',
  'scores',
  'category',
  'metadata',
  'routing_time',
  'full_request',
  'sentiment_score',
];
