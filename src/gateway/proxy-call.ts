/**
 * What every proxied call shares (docs/api.md "Embeddings proxy"): provider-key resolution, timing, and recording
 * exactly one log per authenticated call — success, upstream error, or rejected by our validation.
 */
import type { AppDeps } from '../app.js';
import type { AuthContext } from '../auth/authenticator.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { buildNewLog, type LogFields } from '../logs/write/new-log.js';
import type { ProviderName } from '../providers/credentials.js';
import type { ProviderKeyCache } from '../providers/key-cache.js';
import type { PlatformParams } from './platform-params.js';
import type { Metrics } from '../metrics.js';
import type { TokenCounter } from './token-counter.js';

export type ProxyDeps = Pick<AppDeps, 'db' | 'config' | 'prices' | 'writer' | 'upstream' | 'secretKey'> & {
  providerKeys: ProviderKeyCache;
  tokens: TokenCounter;
  metrics: Metrics;
};

export interface ResolvedCredential {
  apiKey: string;
  baseUrl: string;
  usedCustomCredential: boolean;
}

/**
 * The key for this call: customer_credentials first, then the organization's registered key. Only the
 * key is taken from customer_credentials: the upstream URL is never the caller's choice.
 */
export async function resolveCredential(
  deps: ProxyDeps,
  auth: AuthContext,
  provider: ProviderName,
  params: PlatformParams,
): Promise<ResolvedCredential> {
  const registered = await deps.providerKeys.get(auth.organizationId, provider);
  const baseUrl = registered?.baseUrl ?? deps.config.openaiBaseUrl;
  if (registered?.baseUrl) assertUpstreamAllowed(deps.config, registered.baseUrl, 'base_url');
  const custom = params.customerCredentials?.[provider]?.api_key;
  if (custom) return { apiKey: custom, baseUrl, usedCustomCredential: true };
  if (registered) return { apiKey: registered.apiKey, baseUrl, usedCustomCredential: false };
  throw new AppError(
    400,
    'provider_key_missing',
    `No ${provider} API key is registered for this organization. Register one with POST /api/provider-keys/ ` +
      `{"provider": "${provider}", "api_key": "..."} (or \`gatelog providers set ${provider}\`), ` +
      `or send customer_credentials.${provider}.api_key with the call.`,
    `customer_credentials.${provider}.api_key`,
  );
}

/**
 * GATELOG_UPSTREAM_ALLOWED_HOSTS: when set, a provider base_url must name one of its hosts. Checked when
 * a key is registered and again on every call (the list may have changed since).
 */
export function assertUpstreamAllowed(config: Config, baseUrl: string, param: string | null): void {
  const allowed = config.upstreamAllowedHosts;
  if (allowed === null) return;
  const host = new URL(baseUrl).hostname.toLowerCase();
  if (!allowed.has(host)) {
    throw new AppError(
      400,
      'upstream_host_not_allowed',
      `The provider base_url's host '${host}' is not one this gatelog may call; allowed: ${[...allowed].join(', ')} ` +
        '(GATELOG_UPSTREAM_ALLOWED_HOSTS).',
      param,
    );
  }
}

/** Seconds between two performance.now() readings. */
export const seconds = (from: number, to: number) => Math.max(0, (to - from) / 1000);

/** Records the call's one log, and counts it; `receivedAt` is performance.now() when the call arrived. */
export function recordCall(deps: ProxyDeps, auth: AuthContext, fields: LogFields, receivedAt: number): void {
  deps.writer.enqueue([buildNewLog(fields, auth, deps.prices)]);
  const upstream = fields.latency ?? 0;
  deps.metrics.proxiedCall(
    fields.provider_id ?? '',
    fields.model ?? '',
    fields.status_code ?? 200,
    upstream,
    seconds(receivedAt, performance.now()) - upstream,
  );
}

/** Refuses a call before it goes upstream when its log could not be kept. */
export function assertLogRoom(deps: ProxyDeps): void {
  if (!deps.writer.hasRoom(1)) {
    throw new AppError(503, 'log_buffer_full', 'The log store is unavailable and the log buffer is full; retry later.');
  }
}

/** The message of an OpenAI-shaped error body, or a short description of the status. */
export function upstreamErrorMessage(status: number, body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON
  }
  return `The provider answered ${status}.`;
}
