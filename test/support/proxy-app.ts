/**
 * A test app for proxied calls: the fake provider, gatelog pointed at it, one tenant whose organization
 * registered a provider key, and the official OpenAI client holding the tenant's key.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import OpenAI from 'openai';
import { api, startApp, type Tenant, type TestApp } from './harness.js';
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

export async function startProxyApp(env: Record<string, string> = {}): Promise<ProxyTestApp> {
  const fake = await startFakeUpstream();
  const t = await startApp({ env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl, ...env } });
  const a = await t.tenant();
  const registered = await api(t.baseUrl, 'POST', '/api/provider-keys/', {
    key: a.key,
    body: { provider: 'openai', api_key: PROVIDER_KEY },
  });
  assert.equal(registered.status, 201, registered.text);
  const client = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
  return {
    fake,
    t,
    a,
    client,
    close: async () => {
      await t.close();
      await fake.close();
    },
  };
}

/** The log a proxied answer names in X-Gatelog-Log-Id, once written. */
export async function logNamedBy(p: Pick<ProxyTestApp, 't' | 'a'>, logId: string | null) {
  assert.ok(logId, 'the answer names its log');
  await p.t.flush();
  const res = await api(p.t.baseUrl, 'GET', `/api/request-logs/${logId}/`, { key: p.a.key });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

export interface StreamedFormOptions {
  /** Fields sent after the file (as the OpenAI client sends model and the rest). */
  after?: [string, string][];
  /** A pause after the file, before the fields that follow it. */
  pauseMs?: number;
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
  const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
    key: p.a.key,
    body: { provider: 'anthropic', api_key: apiKey, base_url: claude.baseUrl },
  });
  assert.equal(res.status, 201, res.text);
  return { p, claude };
}
