/**
 * POST /api/embeddings (CONTRACT §10–§12): validate → resolve the provider key → forward → answer with
 * the upstream's response → record one log.
 */
import type { AuthContext } from '../auth/authenticator.js';
import { AppError } from '../errors.js';
import type { LogFields } from '../logs/new-log.js';
import { type EmbeddingsRequest, localTokenCount, parseEmbeddingsRequest } from './embeddings-request.js';
import { emptyPlatformParams, type PlatformParams, takePlatformParams } from './platform-params.js';
import {
  assertLogRoom,
  platformLogFields,
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

export async function proxyEmbeddings(
  deps: ProxyDeps,
  auth: AuthContext,
  body: unknown,
  receivedAt: number,
): Promise<ProxyResponse> {
  const started = Date.now();
  let params: PlatformParams = emptyPlatformParams();
  let request: EmbeddingsRequest | null = null;
  let upstreamFields: Record<string, unknown> | null = null;
  const log: LogFields = { log_type: 'embedding', log_method: 'inference', provider_id: 'openai', timestamp: started };
  let recorded = false;
  const finish = (fields: Partial<LogFields>) => {
    if (recorded) return;
    recorded = true;
    recordCall(deps, auth, {
      ...log,
      ...platformLogFields(params),
      model: request?.model ?? (typeof upstreamFields?.model === 'string' ? upstreamFields.model : ''),
      input: upstreamFields?.input,
      embedding_count: request
        ? request.inputs.kind === 'text'
          ? request.inputs.texts.length
          : request.inputs.arrays.length
        : null,
      ...fields,
    });
  };

  try {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
    }
    upstreamFields = { ...(body as Record<string, unknown>) };
    params = takePlatformParams(upstreamFields);
    request = await parseEmbeddingsRequest(upstreamFields);
    const credential = await resolveCredential(deps, auth, 'openai', params);
    log.used_custom_credential = credential.usedCustomCredential;
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
      log.routing_time = seconds(receivedAt, dispatchedAt);
      log.latency = seconds(dispatchedAt, performance.now());
    }

    if (upstream.status >= 400) {
      finish({ status_code: upstream.status, error_message: upstreamErrorMessage(upstream.status, upstream.body) });
      return { status: upstream.status, contentType: upstream.contentType, body: upstream.body };
    }
    return await answer(deps, request, params, upstream.body, upstream.contentType, upstreamFields, finish, log);
  } catch (err) {
    const status = err instanceof AppError ? err.status : 500;
    finish({ status_code: status, error_message: err instanceof AppError ? err.message : 'internal error' });
    throw err;
  }
}

async function answer(
  deps: ProxyDeps,
  request: EmbeddingsRequest,
  params: PlatformParams,
  raw: Buffer,
  contentType: string,
  fullRequest: Record<string, unknown>,
  finish: (fields: Partial<LogFields>) => void,
  log: LogFields,
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
  const promptTokens = parsed.usage?.prompt_tokens ?? (await localTokenCount(request.inputs));
  const dimensions = dimensionsOf(data[0]?.embedding);
  const cost = deps.prices.cost({ model: request.model, promptTokens, completionTokens: 0 });
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
      timestamp: new Date(log.timestamp ?? Date.now()).toISOString(),
      status_code: 200,
      stream: false,
      latency: log.latency ?? 0,
      scores: {},
      category: 'embedding',
      metadata: params.metadata,
      routing_time: log.routing_time ?? 0,
      full_request: fullRequest,
      sentiment_score: null,
    };
    changed = true;
  }
  return changed
    ? { status: 200, contentType: 'application/json', body: JSON.stringify(parsed) }
    : { status: 200, contentType, body: raw };
}
