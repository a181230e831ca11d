/**
 * A provider's answer given to the client: an error passed through as it came (marked as the
 * provider's), a whole success read by its route, or an event stream passed on as it arrives.
 */
import { AppError } from '../../errors.js';
import type { UpstreamError } from '../../providers/protocol.js';
import type { UpstreamResponse, UpstreamStream } from '../../providers/upstream-client.js';
import { cacheHeader, storeInCache } from './call-cache.js';
import type { ProxiedRoute } from './contract.js';
import type { ProxiedCall, ProxyResponse } from './call.js';
import type { StreamOutcome, StreamReader } from './stream-contract.js';
import { endCall } from './outcome.js';
import { finish, seconds } from './record.js';
import { reportUsage } from './usage.js';
import { StreamPipeline } from './stream-pipeline.js';

/**
 * A provider's error answer as its protocol reads it: the status and message the log keeps. A refused
 * key (401, 403) says whose key it was: the client sees the provider's answer as it came, which reads
 * like a refused gatelog key.
 */
export function upstreamError(call: ProxiedCall, upstream: UpstreamResponse): UpstreamError {
  // The provider is chosen before every try (useTarget).
  const provider = call.provider!;
  const error = provider.definition.protocol.error(upstream.status, upstream.body);
  if (error.status !== 401 && error.status !== 403) return error;
  const whose = call.log.used_custom_credential
    ? "the key in the call's customer_credentials"
    : `the key registered for it in gatelog (replace it with POST /api/provider-keys/)`;
  return { ...error, message: `Provider '${provider.name}' refused ${whose}: ${error.message}` };
}

/** A provider's JSON answer, which must be an object (else a 502: the answer cannot be read). */
export function upstreamObject(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not JSON.');
  }
  return parsed as Record<string, unknown>;
}

/** A whole upstream answer → the client's: an error passed through as it came, a success read by the route. */
export async function wholeAnswer<Prepared>(
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
  call: ProxiedCall,
  upstream: UpstreamResponse,
): Promise<ProxyResponse> {
  if (upstream.status >= 400) {
    const error = upstreamError(call, upstream);
    endCall(call, { kind: 'provider_error', error });
    await route.settle?.(prepared, call);
    finish(call);
    const translated = route.upstreamError?.(prepared, upstream, call) ?? null;
    return {
      status: error.status,
      contentType: translated?.contentType ?? upstream.contentType,
      body: translated?.body ?? upstream.body,
      upstreamRequestId: upstream.requestId,
      // The body is the provider's, as it came: this says so (a 401 here is not gatelog refusing a key).
      headers: { ...cacheHeader(call), 'x-gatelog-error-source': 'provider' },
    };
  }
  const { response: res, keep } = await route.answer(prepared, upstream, call);
  if (keep) storeInCache(call, keep);
  res.upstreamRequestId = upstream.requestId;
  res.headers = { ...res.headers, ...cacheHeader(call) };
  await route.settle?.(prepared, call);
  finish(call);
  return res;
}

/**
 * An event stream → the client's answer, at once: the events follow as they arrive, and the call's log
 * is recorded when the stream ends, however it ends (stream-pipeline.ts decides, once).
 */
export function streamAnswer(call: ProxiedCall, upstream: UpstreamStream, reader: StreamReader, dispatchedAt: number) {
  const { config } = call.deps;
  let ended!: () => void;
  const endedPromise = new Promise<void>((resolve) => (ended = resolve));
  const body = new StreamPipeline(upstream, reader, {
    idleTimeoutMs: config.streamIdleTimeoutMs,
    keepaliveMs: config.streamKeepaliveMs,
    maxDurationMs: config.streamMaxDurationMs,
    onEnd: async (outcome) => {
      try {
        await endStream(call, reader, outcome, dispatchedAt);
      } catch {
        // The log is recorded with what is known.
      }
      try {
        finish(call);
      } finally {
        ended();
      }
    },
  });
  return {
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    body,
    headers: { 'cache-control': 'no-cache', ...cacheHeader(call) },
    upstreamRequestId: upstream.requestId,
    ended: endedPromise,
  } satisfies ProxyResponse;
}

/** A stream's log once it is over: how it ended, its timing, what its reader made of it, its keeping. */
async function endStream(
  call: ProxiedCall,
  reader: StreamReader,
  outcome: StreamOutcome,
  dispatchedAt: number,
): Promise<void> {
  const { log } = call;
  const first = reader.firstOutputAt;
  log.time_to_first_token = first === null ? null : seconds(dispatchedAt, first);
  endCall(call, { kind: 'stream', outcome, reader });
  log.latency = seconds(dispatchedAt, outcome.at);
  const { usage, keep } = await reader.end(call, first === null ? null : seconds(first, outcome.at));
  await reportUsage(call, usage);
  // Only a whole answer is kept, and only from a call that succeeded.
  if (keep && (log.status_code ?? 200) < 400) storeInCache(call, keep);
}
