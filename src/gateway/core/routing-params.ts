/**
 * The routing platform parameters (docs/api.md "Retries and fallbacks"), Keywords AI's names:
 * `fallback_models`, `retry_params`, `load_balance_group`, `disable_fallback`. Read from a JSON body or
 * a form's fields (as JSON text), refused with a 400 naming the field when malformed.
 */
import { AppError } from '../../errors.js';

export interface RoutingParams {
  /** Models tried in order when the call's model fails (any provider). */
  fallbackModels: string[];
  /** Tries of one model after its first, or 0. */
  retries: number;
  /** Seconds before the first retry (doubled each time). */
  retryAfter: number;
  /** The call's model chosen among these by weight, instead of its own. */
  loadBalance: { model: string; weight: number }[] | null;
  disableFallback: boolean;
}

export const ROUTING_PARAMS = ['fallback_models', 'retry_params', 'load_balance_group', 'disable_fallback'] as const;

/** At most this many fallbacks: each may wait through retries of its own. */
const MAX_FALLBACKS = 10;
const MAX_RETRIES = 10;
/** The longest wait before a retry, whatever the provider's retry-after says. */
export const MAX_RETRY_WAIT_S = 60;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const bad = (param: string, message: string) => new AppError(400, 'invalid_value', message, param);

/** A JSON body's value, or a form field's JSON text. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function modelName(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 256) {
    throw bad(param, `${param} must be a model name (a non-empty string of at most 256 characters).`);
  }
  return value;
}

function bool(value: unknown, param: string): boolean {
  const v = parsed(value);
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw bad(param, `${param} must be a boolean.`);
  return v;
}

function positiveNumber(value: unknown, param: string, fallback: number, max: number): number {
  const v = parsed(value);
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > max) {
    throw bad(param, `${param} must be a number above 0 and at most ${max}.`);
  }
  return v;
}

export function noRouting(): RoutingParams {
  return { fallbackModels: [], retries: 0, retryAfter: 0.2, loadBalance: null, disableFallback: false };
}

/** The routing parameters among a call's platform parameters (`raw`: name → value as sent). */
export function readRouting(raw: Record<string, unknown>): RoutingParams {
  const routing = noRouting();
  const fallbacks = parsed(raw.fallback_models);
  if (fallbacks !== undefined && fallbacks !== null) {
    if (!Array.isArray(fallbacks) || fallbacks.length > MAX_FALLBACKS) {
      throw bad('fallback_models', `fallback_models must be a list of at most ${MAX_FALLBACKS} model names.`);
    }
    routing.fallbackModels = fallbacks.map((m, i) => modelName(m, `fallback_models[${i}]`));
  }
  const retry = parsed(raw.retry_params);
  if (retry !== undefined && retry !== null) {
    if (!isObject(retry)) throw bad('retry_params', 'retry_params must be an object: {"retry_enabled": true, ...}.');
    for (const key of Object.keys(retry)) {
      if (!['retry_enabled', 'num_retries', 'retry_after'].includes(key)) {
        throw bad(`retry_params.${key}`, `retry_params has no field ${key} (retry_enabled, num_retries, retry_after).`);
      }
    }
    if (typeof retry.retry_enabled !== 'boolean') {
      throw bad('retry_params.retry_enabled', 'retry_params.retry_enabled is required: true or false.');
    }
    const num = retry.num_retries ?? 3;
    if (typeof num !== 'number' || !Number.isInteger(num) || num < 1 || num > MAX_RETRIES) {
      throw bad(
        'retry_params.num_retries',
        `retry_params.num_retries must be a whole number from 1 to ${MAX_RETRIES}.`,
      );
    }
    routing.retryAfter = positiveNumber(retry.retry_after, 'retry_params.retry_after', 0.2, MAX_RETRY_WAIT_S);
    routing.retries = retry.retry_enabled ? num : 0;
  }
  const group = parsed(raw.load_balance_group);
  if (group !== undefined && group !== null) {
    const models = isObject(group) ? group.models : undefined;
    if (!Array.isArray(models) || models.length === 0 || models.length > MAX_FALLBACKS) {
      throw bad(
        'load_balance_group.models',
        `load_balance_group must be {"models": [{"model": "...", "weight": 1}, ...]} with 1 to ${MAX_FALLBACKS} models.`,
      );
    }
    routing.loadBalance = models.map((entry, i) => {
      const param = `load_balance_group.models[${i}]`;
      if (!isObject(entry)) throw bad(param, `${param} must be {"model": "...", "weight": 1}.`);
      const weight = entry.weight ?? 1;
      if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0) {
        throw bad(`${param}.weight`, `${param}.weight must be a number above 0.`);
      }
      return { model: modelName(entry.model, `${param}.model`), weight };
    });
  }
  routing.disableFallback = bool(raw.disable_fallback, 'disable_fallback');
  return routing;
}

/**
 * The models a call tries, in order: its own (or one of its load-balance group, by weight), then its
 * fallbacks unless disabled — each once.
 */
export function modelsToTry(model: string, routing: RoutingParams, random: number = Math.random()): string[] {
  let first = model;
  if (routing.loadBalance !== null) {
    const total = routing.loadBalance.reduce((sum, m) => sum + m.weight, 0);
    let at = random * total;
    first = routing.loadBalance[routing.loadBalance.length - 1].model;
    for (const m of routing.loadBalance) {
      at -= m.weight;
      if (at < 0) {
        first = m.model;
        break;
      }
    }
  }
  const models = [first];
  if (!routing.disableFallback) for (const m of routing.fallbackModels) if (!models.includes(m)) models.push(m);
  return models;
}
