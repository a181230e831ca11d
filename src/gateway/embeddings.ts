/**
 * POST /api/embeddings (docs/api.md "Embeddings proxy"): how an embeddings call is read, sent upstream and
 * answered; proxy-call.ts runs the rest of its life (key, timing, errors, its one log).
 */
import { AppError } from '../errors.js';
import { base64Bytes, parseWithoutVectors } from './embeddings-answer.js';
import { type EmbeddingsRequest, localTokenCount, parseEmbeddingsRequest } from './embeddings-request.js';
import { takePlatformParams } from './platform-params.js';
import { isOwnServer, servingProvider } from './credential.js';
import { type ProxiedRoute, requestBreakdown } from './proxy-call.js';
import { attemptedModel } from '../logs/indexed-text.js';

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
  return base64Bytes(text.length, text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
}

const dimensionsOf = (embedding: number[] | string | undefined) =>
  embedding === undefined ? null : Array.isArray(embedding) ? embedding.length : base64ByteLength(embedding) / 4;

/** An embeddings call once validated: what goes upstream, and what it asks for. */
interface PreparedEmbeddings {
  request: EmbeddingsRequest;
  /** The body without the platform parameters: sent upstream, and the breakdown's full_request. */
  upstreamFields: Record<string, unknown>;
}

/** POST /api/embeddings as a proxied route (proxy-call.ts runs it). */
export const embeddingsRoute: ProxiedRoute<PreparedEmbeddings> = {
  logType: 'embedding',
  kinds: ['openai', 'azure'],
  model: ({ request }) => request.model,

  async prepare(call, body) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
    }
    const upstreamFields = { ...(body as Record<string, unknown>) };
    const { log } = call;
    log.model = attemptedModel(upstreamFields.model);
    call.params = takePlatformParams(upstreamFields);
    log.input = upstreamFields.input;
    // A server of the organization's own serves its own models: any name goes (docs/api.md "Embeddings proxy").
    // A model no provider serves passes here and is refused by the lifecycle, naming it.
    const choice = await servingProvider(call.deps, call.auth, upstreamFields.model);
    call.provider = choice;
    const anyModel = choice === null || isOwnServer(choice);
    // Checked as the provider knows it (`openai/text-embedding-3-small` is text-embedding-3-small).
    const checked =
      choice && choice.model !== upstreamFields.model ? { ...upstreamFields, model: choice.model } : upstreamFields;
    const request = {
      ...(await parseEmbeddingsRequest(checked, call.deps.tokens, anyModel)),
      model: upstreamFields.model as string,
    };
    log.model = request.model;
    log.embedding_count = request.inputs.kind === 'text' ? request.inputs.texts.length : request.inputs.arrays.length;
    return { request, upstreamFields };
  },

  upstreamCall: ({ request, upstreamFields }, model) => ({
    path: '/embeddings',
    contentType: 'application/json',
    body: JSON.stringify(model === request.model ? upstreamFields : { ...upstreamFields, model }),
  }),

  async answer({ request, upstreamFields }, upstream, call) {
    // An answer passed on as it came (base64 asked for and given, no breakdown added) is read without
    // its vectors (embeddings-answer.ts); any other is parsed whole.
    const slim =
      request.encodingFormat === 'base64' && !call.params.requestBreakdown ? parseWithoutVectors(upstream.body) : null;
    let parsed: EmbeddingsResponse;
    if (slim) {
      parsed = slim.parsed as EmbeddingsResponse;
    } else {
      try {
        parsed = JSON.parse(upstream.body.toString('utf8')) as EmbeddingsResponse;
      } catch {
        throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not JSON.');
      }
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
    const { log, deps } = call;
    const promptTokens = parsed.usage?.prompt_tokens ?? (await localTokenCount(request.inputs, deps.tokens));
    const firstVector = slim ? slim.vectorBytes[0] : undefined;
    const dimensions = slim ? (firstVector === undefined ? null : firstVector / 4) : dimensionsOf(data[0]?.embedding);
    log.prompt_tokens = promptTokens;
    log.cost =
      deps.prices.cost({
        model: call.provider?.model ?? request.model,
        providerId: call.provider?.name ?? 'openai',
        promptTokens,
        completionTokens: 0,
      }) ?? undefined; // unknown: the log marks it (new-log.ts)
    log.embedding_dimensions = dimensions;
    log.output = {
      object: parsed.object,
      model: parsed.model,
      usage: parsed.usage,
      data_count: data.length,
      dimensions,
    };
    if (call.params.requestBreakdown) {
      (parsed as Record<string, unknown>).request_breakdown = requestBreakdown(call, upstreamFields);
      changed = true;
    }
    return changed
      ? { status: 200, contentType: 'application/json', body: JSON.stringify(parsed) }
      : { status: 200, contentType: upstream.contentType, body: upstream.body };
  },
};
