/**
 * Which provider and key serve a proxied call (docs/api.md "Providers"): the provider chosen by the
 * model, the key from customer_credentials or the provider's registered keys, the upstream URL from the
 * provider (never from the caller) and allowed by GATELOG_UPSTREAM_ALLOWED_HOSTS.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { addressPolicyOf } from '../../providers/address-policy.js';
import type { Authenticate } from '../../providers/authentication.js';
import type { UpstreamRequest } from '../../providers/upstream-client.js';
import { chooseProvider, pickKey, type ProviderChoice } from '../../providers/choose-provider.js';
import { authenticateWith, baseUrlOf } from '../../providers/kind.js';
import type { PlatformParams } from './platform-params.js';
import type { ProxyDeps } from './deps.js';

export interface ResolvedCredential {
  /** The provider that serves the call, and the model as it knows it. */
  provider: ProviderChoice;
  apiKey: string;
  baseUrl: string;
  /** How the call is authenticated with the key (its kind's `authenticate`). */
  auth: Authenticate;
  usedCustomCredential: boolean;
  /** The base URL is one the organization registered: its address is checked when connecting. */
  checkAddress: boolean;
}

/** The provider that serves `model` for the caller's organization (choose-provider.ts). */
export async function chooseFor(deps: ProxyDeps, auth: AuthContext, model: string): Promise<ProviderChoice> {
  return chooseProvider(await deps.providerKeys.providers(auth.organizationId), model, deps.providerKinds);
}

/**
 * The key for this call to the provider that serves it: customer_credentials for that provider's name,
 * else one of its registered keys by weight. Only the key is taken from customer_credentials: the
 * upstream URL is never the caller's choice.
 */
export function resolveCredential(
  deps: ProxyDeps,
  provider: ProviderChoice,
  model: string,
  params: PlatformParams,
  kinds: readonly string[],
  /** A key already in use for this call (an upload sent early): taken when the provider holds it. */
  preferKey?: string,
): ResolvedCredential {
  const { name, registered } = provider;
  if (!kinds.includes(provider.kind)) {
    throw new AppError(
      400,
      'provider_not_supported',
      `Model '${model}' is served by provider '${name}' (kind ${provider.kind}), which this route does not ` +
        `call yet; it calls providers of kind ${kinds.join(', ')}.`,
      'model',
    );
  }
  const baseUrl = baseUrlOf(provider.definition, registered, deps.config);
  if (baseUrl === null) {
    throw new AppError(400, 'provider_base_url_missing', `Provider '${name}' has no base_url.`, 'model');
  }
  if (registered?.baseUrl) assertUpstreamAllowed(deps.config, registered.baseUrl, 'base_url');
  const checkAddress = Boolean(registered?.baseUrl);
  const custom = params.customerCredentials?.[name]?.api_key;
  if (custom) {
    const auth = authenticateWith(provider.definition, custom, registered?.options);
    return { provider, apiKey: custom, baseUrl, auth, usedCustomCredential: true, checkAddress };
  }
  const keys = registered?.keys ?? [];
  const key = keys.find((k) => k.apiKey === preferKey) ?? pickKey(keys);
  if (key) {
    const auth = authenticateWith(provider.definition, key.apiKey, registered?.options);
    return { provider, apiKey: key.apiKey, baseUrl, auth, usedCustomCredential: false, checkAddress };
  }
  throw new AppError(
    400,
    'provider_key_missing',
    `No ${name} API key is registered for this organization. Register one with POST /api/provider-keys/ ` +
      `{"provider": "${name}", "api_key": "..."} (or \`gatelog providers set ${name}\`), ` +
      `or send customer_credentials.${name}.api_key with the call.`,
    `customer_credentials.${name}.api_key`,
  );
}

/** The host of OpenAI's own API, whose models gatelog knows. */
const OPENAI_API_HOST = 'api.openai.com';

/** The provider that will serve `model`, or null when none does (resolveCredential then refuses it). */
export async function servingProvider(
  deps: ProxyDeps,
  auth: AuthContext,
  model: unknown,
): Promise<ProviderChoice | null> {
  if (typeof model !== 'string' || model === '') return null;
  try {
    return await chooseFor(deps, auth, model);
  } catch {
    return null;
  }
}

/**
 * Whether a provider is a server of the organization's own: registered with a base_url other than
 * OpenAI's API (an OpenAI-compatible server such as vLLM or Ollama), which serves models of its own
 * under any name. The default upstream (GATELOG_OPENAI_BASE_URL) is OpenAI's.
 */
export function isOwnServer(choice: ProviderChoice): boolean {
  const baseUrl = choice.registered?.baseUrl ?? null;
  if (baseUrl === null) return false;
  return URL.parse(baseUrl)?.hostname.toLowerCase() !== OPENAI_API_HOST;
}

/**
 * GATELOG_UPSTREAM_ALLOWED_HOSTS: when set, a provider base_url must name one of its hosts; and a host
 * that is an address literal must be one the address policy allows (a name's addresses are checked when
 * connecting: providers/address-policy.ts). Checked when a key is registered and again on every call
 * (the settings may have changed since).
 */
export function assertUpstreamAllowed(config: Config, baseUrl: string, param: string | null): void {
  const denied = addressPolicyOf(config).literalRefusal(baseUrl, param);
  if (denied !== null) throw denied;
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

/**
 * A route's upstream call addressed with its credential: the path as the provider's protocol spells it,
 * the provider's server and the key's authentication. Set on `call` itself, no copy: it runs per try.
 */
export function addressedWith(
  call: Omit<UpstreamRequest, 'baseUrl' | 'auth' | 'checkAddress'>,
  credential: ResolvedCredential,
): UpstreamRequest {
  const { provider } = credential;
  const request = call as UpstreamRequest;
  request.path = provider.definition.protocol.path(request.path, provider.model, provider.registered?.options ?? {});
  request.baseUrl = credential.baseUrl;
  request.auth = credential.auth;
  request.checkAddress = credential.checkAddress;
  return request;
}
