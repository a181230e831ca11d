/**
 * A test app for proxied calls: the fake provider, gatelog pointed at it, one tenant whose organization
 * registered a provider key, and the official OpenAI client holding the tenant's key.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import OpenAI from 'openai';
import { api, closeInOrder, startApp, type StartOptions, type Tenant, type TestApp } from './harness.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';
import { type FakeAnthropic, startFakeAnthropic } from './fake-anthropic.js';

export const PROVIDER_KEY = 'sk-registered-provider-key-1234';

export interface ProxyTestApp {
  fake: FakeUpstream;
  t: TestApp;
  a: Tenant;
  client: OpenAI;
  close(): Promise<void>;
}

/** An app whose OpenAI upstream is a fake provider (`options.env` added), and one tenant of it. */
export async function startAppOnFakeUpstream(
  options: StartOptions = {},
): Promise<{ fake: FakeUpstream; t: TestApp; a: Tenant }> {
  const fake = await startFakeUpstream();
  const t = await startApp({ ...options, env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl, ...options.env } });
  return { fake, t, a: await t.tenant() };
}

/** Registers a provider key for the organization of `key`, which must be accepted (201): what it answered. */
export async function registerProviderKey(t: TestApp, key: string, body: Record<string, unknown>) {
  const res = await api(t.baseUrl, 'POST', '/api/provider-keys/', { key, body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** The official OpenAI client calling gatelog with a tenant's key, never retrying. */
export function openAIClientOf(t: TestApp, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
}

export async function startProxyApp(env: Record<string, string> = {}): Promise<ProxyTestApp> {
  const { fake, t, a } = await startAppOnFakeUpstream({ env });
  await registerProviderKey(t, a.key, { provider: 'openai', api_key: PROVIDER_KEY });
  return {
    fake,
    t,
    a,
    client: openAIClientOf(t, a.key),
    close: () => closeInOrder(t, fake),
  };
}

/** The log an answer names (in X-Gatelog-Log-Id, or in its body), once written: read with `key`. */
export async function logNamedByAnswer(t: TestApp, key: string, logId: string | null) {
  assert.ok(logId, 'the answer names its log');
  await t.flush();
  const res = await api(t.baseUrl, 'GET', `/api/request-logs/${logId}/`, { key });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The log a proxied answer names in X-Gatelog-Log-Id, once written. */
export function logNamedBy(p: Pick<ProxyTestApp, 't' | 'a'>, logId: string | null) {
  return logNamedByAnswer(p.t, p.a.key, logId);
}

export interface StreamedFormOptions {
  /** Fields sent after the file (as the OpenAI client sends model and the rest). */
  after?: [string, string][];
  /** A pause after the file, before the fields that follow it. */
  pauseMs?: number;
  /** Waited for after the file, before the fields that follow it (a condition the test waits on). */
  beforeAfter?: () => Promise<unknown>;
}

/**
 * Posts a multipart form in 64 KB chunks, without a length, as a client streaming a file does: the text
 * fields, then the file, read from `file` only as the upload goes, then `after`.
 */
export function sendStreamedForm(
  p: Pick<ProxyTestApp, 't' | 'a'>,
  fields: [string, string][],
  filename: string,
  file: Iterable<Buffer>,
  options: StreamedFormOptions = {},
): Promise<Response> {
  const boundary = `streamed-form-${crypto.randomUUID()}`;
  async function* body() {
    const text = (list: [string, string][]) =>
      list.map(
        ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
      );
    const head = text(fields).join('');
    yield Buffer.from(
      `${head}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n`,
    );
    for (const piece of file) {
      for (let at = 0; at < piece.length; at += 64 * 1024) yield piece.subarray(at, at + 64 * 1024);
    }
    yield Buffer.from('\r\n');
    if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    await options.beforeAfter?.();
    yield Buffer.from(`${text(options.after ?? []).join('')}--${boundary}--\r\n`);
  }
  return fetch(`${p.t.baseUrl}/api/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.a.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: ReadableStream.from(body()),
    duplex: 'half',
  } as RequestInit);
}

/**
 * The log an answer names. A stream's log is written when the call ends, which for a client that went
 * away is a moment after the client stopped: wait for it (at most 3 s) rather than for one flush.
 */
export async function logWhenWritten(t: TestApp, a: Tenant, id: string | null) {
  assert.ok(id, 'the answer names its log');
  for (let waited = 0; ; waited += 50) {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
    if (res.status === 200) return res.body;
    assert.ok(res.status === 404 && waited < 3000, `log ${id}: ${res.status} ${res.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A loopback port nothing listens on: a connection to it is refused (a provider that is down). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A proxy test app whose organization also registered an Anthropic key served by a fake Claude. */
export async function startClaudeProxyApp(
  apiKey = 'sk-ant-test-key-0001',
): Promise<{ p: ProxyTestApp; claude: FakeAnthropic }> {
  const claude = await startFakeAnthropic();
  const p = await startProxyApp();
  await registerProviderKey(p.t, p.a.key, { provider: 'anthropic', api_key: apiKey, base_url: claude.baseUrl });
  return { p, claude };
}
