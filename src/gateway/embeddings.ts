/**
 * POST /api/embeddings (docs/api.md "Embeddings proxy"): validate → resolve the provider key → forward → answer with
 * the upstream's response → record one log.
 */
import type { AuthContext } from '../auth/authenticator.js';
import { AppError, RejectedBody } from '../errors.js';
import { type EmbeddingsRequest, localTokenCount, parseEmbeddingsRequest } from './embeddings-request.js';
import { emptyPlatformParams, type PlatformParams, takePlatformParams } from './platform-params.js';
import {
  assertLogRoom,
  type ProxyDeps,
  recordCall,
  resolveCredential,
  seconds,
  upstreamErrorMessage,
} from './proxy-call.js';

export interface ProxyResponse {
  status: number;
  contentType: string;
  body: Buffer | string;
  /** The provider's x-request-id, passed through. */
  upstreamRequestId?: string;
}

interface EmbeddingData {
  object?: string;
  index?: number;
  embedding: number[] | string;
}

interface EmbeddingsResponse {
  object?: string;
  model?: string;
  data?: EmbeddingData[];
  usage?: { prompt_tokens?: number; total_tokens?: number };
}

/** Float vector → base64 of little-endian float32, as the provider encodes it. */
export function floatsToBase64(vector: number[]): string {
  const buffer = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) buffer.writeFloatLE(vector[i], i * 4);
  return buffer.toString('base64');
}

/** Bytes a base64 string decodes to, read from its length and padding (no decoding). */
export function base64ByteLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

const dimensionsOf = (embedding: number[] | string | undefined) =>
  embedding === undefined ? null : Array.isArray(embedding) ? embedding.length : base64ByteLength(embedding) / 4;

/** What one call has learned so far; its log is built from it in one go (see `finish`). */
interface CallState {
  started: number;
  params: PlatformParams;
  request: EmbeddingsRequest | null;
  upstreamFields: Record<string, unknown> | null;
  usedCustomCredential: boolean;
  routingTime: number;
  latency: number;
  recorded: boolean;
}

/** What a call ended with. */
interface Outcome {
  status_code: number;
  error_message?: string;
  prompt_tokens?: number;
  cost?: number;
  output?: unknown;
  embedding_dimensions?: number | null;
}

export async function proxyEmbeddings(
  deps: ProxyDeps,
  auth: AuthContext,
  body: unknown,
  receivedAt: number,
  /** The unique_id the call's log gets (sent to the client as X-Gatelog-Log-Id before the call ends). */
  logId: string,
): Promise<ProxyResponse> {
  const state: CallState = {
    started: Date.now(),
    params: emptyPlatformParams(),
    request: null,
    upstreamFields: null,
    usedCustomCredential: false,
    routingTime: 0,
    latency: 0,
    recorded: false,
  };
  // One object literal of one shape (no spreads): the log is built on every call, and building it
  // from spread objects of varying shapes took a seventh of the event loop's time at full load.
  const finish = (outcome: Outcome) => {
    if (state.recorded) return;
    state.recorded = true;
    const { params, request, upstreamFields } = state;
    recordCall(
      deps,
      auth,
      {
        unique_id: logId,
        log_type: 'embedding',
        log_method: 'inference',
        provider_id: 'openai',
        timestamp: state.started,
        model: request?.model ?? (typeof upstreamFields?.model === 'string' ? upstreamFields.model : ''),
        input: upstreamFields?.input,
        output: outcome.output,
        embedding_count: request
          ? request.inputs.kind === 'text'
            ? request.inputs.texts.length
            : request.inputs.arrays.length
          : null,
        embedding_dimensions: outcome.embedding_dimensions ?? null,
        prompt_tokens: outcome.prompt_tokens,
        cost: outcome.cost,
        status_code: outcome.status_code,
        error_message: outcome.error_message ?? null,
        routing_time: state.routingTime,
        latency: state.latency,
        used_custom_credential: state.usedCustomCredential,
        metadata: params.metadata,
        customer_identifier: params.customerIdentifier,
        customer_email: params.customerEmail,
        thread_identifier: params.threadIdentifier,
        omitContent: params.disableLog,
      },
      receivedAt,
    );
  };

  try {
    if (body instanceof RejectedBody) throw body.error;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
    }
    const upstreamFields = { ...(body as Record<string, unknown>) };
    state.upstreamFields = upstreamFields;
    const params = takePlatformParams(upstreamFields);
    state.params = params;
    const request = await parseEmbeddingsRequest(upstreamFields, deps.tokens);
    state.request = request;
    const credential = await resolveCredential(deps, auth, 'openai', params);
    state.usedCustomCredential = credential.usedCustomCredential;
    assertLogRoom(deps);

    const payload = JSON.stringify(upstreamFields);
    const dispatchedAt = performance.now();
    let upstream;
    try {
      upstream = await deps.upstream.post({
        baseUrl: credential.baseUrl,
        path: '/embeddings',
        apiKey: credential.apiKey,
        contentType: 'application/json',
        body: payload,
      });
    } finally {
      // Timed whether the upstream answered or failed: the log of a 502/504 carries them too.
      state.routingTime = seconds(receivedAt, dispatchedAt);
      state.latency = seconds(dispatchedAt, performance.now());
    }

    if (upstream.status >= 400) {
      finish({ status_code: upstream.status, error_message: upstreamErrorMessage(upstream.status, upstream.body) });
      return {
        status: upstream.status,
        contentType: upstream.contentType,
        body: upstream.body,
        upstreamRequestId: upstream.requestId,
      };
    }
    const res = await answer(deps, state, request, params, upstream.body, upstream.contentType, upstreamFields, finish);
    res.upstreamRequestId = upstream.requestId;
    return res;
  } catch (err) {
    const status = err instanceof AppError ? err.status : 500;
    finish({ status_code: status, error_message: err instanceof AppError ? err.message : 'internal error' });
    throw err;
  }
}

async function answer(
  deps: ProxyDeps,
  state: CallState,
  request: EmbeddingsRequest,
  params: PlatformParams,
  raw: Buffer,
  contentType: string,
  fullRequest: Record<string, unknown>,
  finish: (outcome: Outcome) => void,
): Promise<ProxyResponse> {
  let parsed: EmbeddingsResponse;
  try {
    parsed = JSON.parse(raw.toString('utf8')) as EmbeddingsResponse;
  } catch {
    finish({ status_code: 502, error_message: 'The provider answered with a body that is not JSON.' });
    throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not JSON.');
  }
  const data = Array.isArray(parsed.data) ? parsed.data : [];
  // Every OpenAI client can decode base64: give it base64 when it asked, whatever the upstream sent.
  let changed = false;
  if (request.encodingFormat === 'base64') {
    for (const item of data) {
      if (Array.isArray(item.embedding)) {
        item.embedding = floatsToBase64(item.embedding);
        changed = true;
      }
    }
  }
  const promptTokens = parsed.usage?.prompt_tokens ?? (await localTokenCount(request.inputs, deps.tokens));
  const dimensions = dimensionsOf(data[0]?.embedding);
  const cost = deps.prices.cost({ model: request.model, providerId: 'openai', promptTokens, completionTokens: 0 });
  const output = {
    object: parsed.object,
    model: parsed.model,
    usage: parsed.usage,
    data_count: data.length,
    dimensions,
  };
  finish({ status_code: 200, prompt_tokens: promptTokens, cost, output, embedding_dimensions: dimensions });

  if (params.requestBreakdown) {
    (parsed as Record<string, unknown>).request_breakdown = {
      prompt_tokens: promptTokens,
      completion_tokens: 0,
      cost,
      prompt_messages: null,
      completion_message: null,
      model: request.model,
      cached: false,
      timestamp: new Date(state.started).toISOString(),
      status_code: 200,
      stream: false,
      latency: state.latency,
      scores: {},
      category: 'embedding',
      metadata: params.metadata,
      routing_time: state.routingTime,
      full_request: fullRequest,
      sentiment_score: null,
    };
    changed = true;
  }
  return changed
    ? { status: 200, contentType: 'application/json', body: JSON.stringify(parsed) }
    : { status: 200, contentType, body: raw };
}
