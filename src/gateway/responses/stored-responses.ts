/**
 * The Responses API's routes on a response the provider stored (docs/api.md "Responses API"): GET and
 * DELETE /responses/{id}, GET /responses/{id}/input_items, POST /responses/{id}/cancel. They read or
 * change what a model call made; they are not model calls, so they make no log. Each is passed to the
 * provider with the organization's registered key — of provider `openai`, or of the provider a
 * `provider` query parameter names — and its answer comes back as it came: status, content type and
 * body, or, for `GET /responses/{id}?stream=true`, the provider's event stream, event by event.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { AppError } from '../../errors.js';
import { pickKey } from '../../providers/choose-provider.js';
import { authenticateWith, baseUrlOf } from '../../providers/kind.js';
import type { UpstreamRequest } from '../../providers/upstream-client.js';
import { assertUpstreamAllowed } from '../core/credential.js';
import type { ProxyDeps } from '../core/deps.js';
import type { ProxyResponse } from '../core/call.js';
import type { StreamEvents } from '../core/stream-contract.js';
import { RESPONSES_PATH, responsesErrorEvent } from './route.js';
import { StreamPipeline } from '../core/stream-pipeline.js';

/** The provider a stored response is asked of when the call names none. */
export const DEFAULT_PROVIDER = 'openai';

export interface StoredResponseCall {
  method: 'GET' | 'DELETE' | 'POST';
  /** The response's id, as the caller gave it. */
  responseId: string;
  /** What follows the response's path: '' or '/input_items' or '/cancel'. */
  sub: '' | '/input_items' | '/cancel';
  /** The caller's query string (without `?`), `provider` taken out; '' for none. */
  query: string;
  /** The provider's name (the `provider` query parameter), or null: the default. */
  provider: string | null;
  /** The caller asked for an event stream (GET with stream=true). */
  stream: boolean;
  /** The gatelog installations the call came through (loop-guard.ts), passed on with it. */
  via: readonly string[];
}

/** Every event of a stored response's stream goes to the client as it came; none is logged. */
const passThrough: StreamEvents = {
  event: () => 'forward',
  errorEvent: responsesErrorEvent,
};

/** The provider's answer to `call`, as it came. */
export async function callStoredResponse(
  deps: ProxyDeps,
  auth: AuthContext,
  call: StoredResponseCall,
): Promise<ProxyResponse> {
  const request = await upstreamRequest(deps, auth, call);
  if (call.stream) {
    const opened = await deps.upstream.open({ ...request, accept: 'text/event-stream' });
    if (opened.kind === 'whole') return whole(opened.response);
    const body = new StreamPipeline(opened, passThrough, {
      idleTimeoutMs: deps.config.streamIdleTimeoutMs,
      keepaliveMs: deps.config.streamKeepaliveMs,
      maxDurationMs: deps.config.streamMaxDurationMs,
      onEnd: () => undefined,
    });
    return {
      status: 200,
      contentType: 'text/event-stream; charset=utf-8',
      body,
      headers: { 'cache-control': 'no-cache' },
      upstreamRequestId: opened.requestId,
    };
  }
  return whole(await deps.upstream.post(request));
}

function whole(response: { status: number; contentType: string; body: Buffer; requestId: string | undefined }) {
  return {
    status: response.status,
    contentType: response.contentType,
    body: response.body,
    upstreamRequestId: response.requestId,
  } satisfies ProxyResponse;
}

/** The call to the provider: its server, one of its keys, the response's path with the caller's query. */
async function upstreamRequest(deps: ProxyDeps, auth: AuthContext, call: StoredResponseCall): Promise<UpstreamRequest> {
  const name = call.provider ?? DEFAULT_PROVIDER;
  const param = call.provider === null ? null : 'provider';
  const registered = await deps.providerKeys.get(auth.organizationId, name);
  const serving = deps.providerKinds.serving('responses');
  if (registered !== null && !serving.includes(registered.kind)) {
    throw new AppError(
      400,
      'provider_not_supported',
      `Provider '${name}' is of kind ${registered.kind}; stored responses are read from providers of kind ` +
        `${serving.join(', ')}.`,
      param,
    );
  }
  const key = pickKey(registered?.keys ?? []);
  if (registered === null || key === null) {
    throw new AppError(
      400,
      'provider_key_missing',
      `No ${name} API key is registered for this organization: stored responses are read with a registered ` +
        `key. Register one with POST /api/provider-keys/ {"provider": "${name}", "api_key": "..."} ` +
        `(or \`gatelog providers set ${name}\`).`,
      param,
    );
  }
  const kind = deps.providerKinds.kindOf(registered, param);
  const baseUrl = baseUrlOf(kind, registered, deps.config);
  if (baseUrl === null) {
    throw new AppError(400, 'provider_base_url_missing', `Provider '${name}' has no base_url.`, param);
  }
  if (registered.baseUrl) assertUpstreamAllowed(deps.config, registered.baseUrl, 'base_url');
  const path = `${RESPONSES_PATH}/${encodeURIComponent(call.responseId)}${call.sub}`;
  return {
    baseUrl,
    path: call.query === '' ? path : `${path}?${call.query}`,
    auth: authenticateWith(kind, key.apiKey, registered.options),
    // None of them has a body: a cancel is a POST without one, as the OpenAI clients send it.
    method: call.method,
    via: call.via,
    checkAddress: registered.baseUrl !== null,
  };
}

/**
 * A raw query string (after `?`) without its `provider` parameter, the rest byte for byte: the
 * provider reads `include[]`, `stream`, `after`, `limit`… as the caller wrote them.
 */
export function forwardedQuery(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return '';
  return url
    .slice(at + 1)
    .split('&')
    .filter((pair) => pair !== '' && nameOf(pair) !== 'provider')
    .join('&');
}

function nameOf(pair: string): string {
  const raw = pair.split('=', 1)[0].replaceAll('+', ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
