/**
 * The 404 of a path that looks like a model route gatelog does not serve (`/api/images/generations`,
 * `/v1/models/{model}`, …): in the one envelope, with code `route_not_proxied` and a message that
 * names the model routes gatelog does serve (the proxied ones and the model lists) and the logging
 * API, the way to record any other call (docs/api.md "Errors").
 */
import { envelope, type ErrorEnvelope } from '../errors.js';
import { PROXY_PREFIXES } from './proxy-routes.js';

/**
 * First path segments of the model providers' APIs (OpenAI's, Anthropic's) that a client pointed at
 * gatelog may call under /api/. Under an alias prefix (/v1/) every path is one: gatelog serves nothing
 * else there.
 */
const MODEL_API_SEGMENTS: ReadonlySet<string> = new Set([
  'anthropic',
  'assistants',
  'audio',
  'batches',
  'chat',
  'complete',
  'completions',
  'containers',
  'conversations',
  'edits',
  'embeddings',
  'engines',
  'evals',
  'files',
  'fine-tunes',
  'fine_tuning',
  'images',
  'messages',
  // The lists are served (http/model-lists.ts); a model's own page (/api/models/{model}) is not.
  'models',
  'moderations',
  'realtime',
  'rerank',
  'responses',
  'threads',
  'uploads',
  'vector_stores',
  'videos',
]);

export function looksLikeModelRoute(path: string): boolean {
  const match = /^(\/[^/]+)\/([^/]+)/.exec(path);
  if (!match) return false;
  const [, prefix, segment] = match;
  if (prefix === PROXY_PREFIXES[0]) return MODEL_API_SEGMENTS.has(segment);
  return (PROXY_PREFIXES as readonly string[]).includes(prefix);
}

/**
 * The documented path a call sent under a wrong base URL meant: a client whose base URL lacks `/v1`
 * (`/chat/completions`) or has one too many (`/api/v1/chat/completions`, `/v1/v1/…`). Null when no
 * proxied route is there either.
 */
function meantPath(method: string, path: string, proxied: readonly string[]): string | null {
  const trimmed = path.replace(/\/+$/, '');
  const candidates = [`/api${trimmed}`, trimmed.replace(/^\/(api|v1)\/v1\//, '/api/')];
  // Anthropic's client appends /v1/messages (or /v1/messages/count_tokens) to its base URL, whatever that is.
  const anthropic = /\/v1\/messages(\/count_tokens)?$/.exec(trimmed);
  if (anthropic) candidates.push(`/api/anthropic${anthropic[0]}`);
  return candidates.find((c) => c !== trimmed && proxied.includes(`${method} ${c}`)) ?? null;
}

/**
 * The 404 of a proxied route called under a wrong base URL, naming the base URL to use; null when the
 * path is no proxied route's. `base` is gatelog's address as the caller reached it.
 */
export function wrongBaseUrlAnswer(
  method: string,
  path: string,
  proxied: readonly string[],
  base: string,
): ErrorEnvelope | null {
  const meant = meantPath(method, path, proxied);
  if (meant === null) return null;
  const message = meant.startsWith('/api/anthropic/')
    ? `No route for ${method} ${path}: gatelog serves Anthropic's Messages API at ${meant.slice('/api/anthropic'.length)} and ${meant}; point Anthropic's client at ${base} or ${base}/api/anthropic.`
    : `No route for ${method} ${path}: gatelog serves it at /v1${meant.slice('/api'.length)} and ${meant}; set your client's base URL to ${base}/v1 (or ${base}/api).`;
  return envelope(404, 'wrong_base_url', message);
}

/**
 * The answer for `method path` when it looks like a model route; null otherwise. `proxied` lists the
 * model routes (registered through proxiedRoute) as "METHOD /api/path", in the order they were registered.
 */
export function notProxiedAnswer(method: string, path: string, proxied: readonly string[]): ErrorEnvelope | null {
  if (!looksLikeModelRoute(path)) return null;
  const aliases = PROXY_PREFIXES.slice(1).join(', ');
  const message =
    `gatelog does not proxy ${method} ${path}. It serves ${proxied.join(', ')} (each also under ${aliases}/). ` +
    'To record a call made another way, send its log to the logging API: POST /api/request-logs/create/ ' +
    '(docs/api.md "Logging API").';
  return envelope(404, 'route_not_proxied', message);
}
