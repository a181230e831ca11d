/**
 * POST /api/embeddings (docs/api.md "Embeddings proxy"): how an embeddings call is read, sent upstream and
 * answered; core/lifecycle.ts runs the rest of its life (key, timing, errors, its one log).
 */
import { AppError } from '../../errors.js';
import { base64Bytes, parseWithoutVectors } from './answer.js';
import { type EmbeddingsRequest, localTokenCount, parseEmbeddingsRequest } from './request.js';
import { isOwnServer, servingProvider } from '../core/credential.js';
import type { ProxiedRoute } from '../core/contract.js';
import type { ProxiedCall, ProxyResponse } from '../core/call.js';
import { requestBreakdown } from '../core/record.js';
import { base64ToFloats, type ItemLookup, itemKeys, missingInput } from './cache.js';
import { tokenCount } from '../../providers/usage.js';
import { reportUsage } from '../core/usage.js';
import { takeJsonBody } from '../core/json-call.js';

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
  /** What the response cache knew of the inputs, when the call is cached. */
  lookup: ItemLookup | null;
}

/** The cache knew some inputs, and this answer comes from the provider and model they were looked up for. */
const fillsGaps = (lookup: ItemLookup | null, provider: string | undefined, model: string): boolean =>
  lookup !== null && lookup.found.size > 0 && lookup.provider === provider && lookup.model === model;

/** POST /api/embeddings as a proxied route (the core runs it, core/lifecycle.ts). */
export const embeddingsRoute: ProxiedRoute<PreparedEmbeddings> = {
  logType: 'embedding',
  providerRoute: 'embeddings',
  model: ({ request }) => request.model,

  async prepare(call, body) {
    const upstreamFields = takeJsonBody(call, body);
    const { log } = call;
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
    return { request, upstreamFields, lookup: null };
  },

  demand: ({ request: { inputs } }) => ({
    prompt: inputs.kind === 'text' ? inputs.texts : inputs.arrays.reduce((sum, a) => sum + a.length, 0),
    // An embedding has no output tokens.
    maxOutputTokens: 0,
  }),

  upstreamCall({ request, upstreamFields, lookup }, model, provider) {
    // Only the inputs the cache did not know go upstream.
    const fields = fillsGaps(lookup, provider.name, model)
      ? { ...upstreamFields, input: missingInput(request, lookup!), model }
      : model === request.model
        ? upstreamFields
        : { ...upstreamFields, model };
    return { path: '/embeddings', contentType: 'application/json', body: JSON.stringify(fields) };
  },

  cache: {
    async parts(prepared, call, base) {
      const keys = itemKeys(prepared.request, base);
      const stored = await call.deps.cache.getMany(call.auth.organizationId, keys);
      const found = new Map<number, string>();
      const missing: number[] = [];
      keys.forEach((key, i) => {
        const vector = stored.get(key);
        if (vector === undefined) missing.push(i);
        else found.set(i, vector);
      });
      prepared.lookup = { provider: String(base.provider), model: String(base.model), keys, found, missing };
      if (missing.length > 0) {
        if (found.size > 0) call.cache!.status = 'PARTIAL';
        return null;
      }
      call.cache!.status = 'HIT';
      return answerFromCache(prepared, call);
    },
  },

  async answer(prepared, upstream, call) {
    const { request, upstreamFields } = prepared;
    // An answer passed on as it came (base64 asked for and given, no breakdown added) is read without
    // its vectors (answer.ts); any other is parsed whole.
    // A cached call needs its vectors (to keep them, or to fill the gaps): read whole.
    const slim =
      request.encodingFormat === 'base64' && !call.params.requestBreakdown && call.cache === null
        ? parseWithoutVectors(upstream.body)
        : null;
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
    let data = Array.isArray(parsed.data) ? parsed.data : [];
    let changed = false;
    if (call.cache !== null) {
      const merged = keepInCache(prepared, call, data);
      if (merged !== data) {
        parsed.data = data = merged;
        changed = true;
      }
    }
    // Every OpenAI client can decode base64: give it base64 when it asked, whatever the upstream sent.
    if (request.encodingFormat === 'base64') {
      for (const item of data) {
        if (Array.isArray(item.embedding)) {
          item.embedding = floatsToBase64(item.embedding);
          changed = true;
        }
      }
    }
    const { log, deps } = call;
    // Every input counted here when the provider gave no count: an embeddings call has no output.
    const promptTokens =
      tokenCount(parsed.usage?.prompt_tokens) ?? (await localTokenCount(request.inputs, deps.tokens));
    const firstVector = slim ? slim.vectorBytes[0] : undefined;
    const dimensions = slim ? (firstVector === undefined ? null : firstVector / 4) : dimensionsOf(data[0]?.embedding);
    await reportUsage(call, {
      model: call.provider?.model ?? request.model,
      usage: { input: promptTokens, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: undefined },
      texts: null,
      generationSeconds: null,
    });
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
    return {
      response: changed
        ? { status: 200, contentType: 'application/json', body: JSON.stringify(parsed) }
        : { status: 200, contentType: upstream.contentType, body: upstream.body },
    };
  },
};

/**
 * Keeps the vectors the provider just gave (when the answer holds them all) and, when the cache knew
 * some of the inputs, answers every input in order: the known from the cache, the rest from the
 * provider. An answer of a fallback model is neither kept nor merged: the keys are the first model's.
 */
function keepInCache(prepared: PreparedEmbeddings, call: ProxiedCall, data: EmbeddingData[]): EmbeddingData[] {
  const { lookup, request } = prepared;
  if (lookup === null || call.cache === null || call.log.fallback_used === true) return data;
  const filling = fillsGaps(lookup, call.provider?.name, call.provider?.model ?? request.model);
  // What was sent: the missing inputs, or all of them.
  const sent = filling ? lookup.missing : lookup.keys.map((_, i) => i);
  const byPosition = new Map(data.map((d, j) => [typeof d.index === 'number' ? d.index : j, d]));
  const entries: { key: string; body: string }[] = [];
  sent.forEach((input, position) => {
    const item = byPosition.get(position);
    if (item === undefined) return;
    const vector = typeof item.embedding === 'string' ? item.embedding : floatsToBase64(item.embedding);
    entries.push({ key: lookup.keys[input], body: vector });
  });
  if (entries.length === sent.length) {
    call.deps.cache.putMany(call.auth.organizationId, 'embedding', entries, call.cache.ttl);
  }
  if (!filling) return data;
  const floats = request.encodingFormat !== 'base64';
  const positionOf = new Map(lookup.missing.map((input, position) => [input, position]));
  return lookup.keys.map((_, i): EmbeddingData => {
    const known = lookup.found.get(i);
    if (known !== undefined)
      return { object: 'embedding', index: i, embedding: floats ? base64ToFloats(known) : known };
    const fresh = byPosition.get(positionOf.get(i)!);
    return { object: 'embedding', ...fresh, index: i, embedding: fresh?.embedding ?? [] };
  });
}

/** Every input was in the cache: the answer, in the encoding asked for, with nothing sent (usage 0). */
function answerFromCache(prepared: PreparedEmbeddings, call: ProxiedCall): ProxyResponse {
  const { request, upstreamFields, lookup } = prepared;
  const floats = request.encodingFormat !== 'base64';
  const data = lookup!.keys.map((_, i) => {
    const vector = lookup!.found.get(i)!;
    return { object: 'embedding', index: i, embedding: floats ? base64ToFloats(vector) : vector };
  });
  const usage = { prompt_tokens: 0, total_tokens: 0 };
  const model = call.provider?.model ?? request.model;
  const dimensions = dimensionsOf(data[0]?.embedding);
  const { log } = call;
  log.prompt_tokens = 0;
  log.embedding_dimensions = dimensions;
  log.output = { object: 'list', model, usage, data_count: data.length, dimensions };
  const answer: Record<string, unknown> = { object: 'list', data, model, usage };
  if (call.params.requestBreakdown) answer.request_breakdown = requestBreakdown(call, upstreamFields);
  return { status: 200, contentType: 'application/json', body: JSON.stringify(answer) };
}
