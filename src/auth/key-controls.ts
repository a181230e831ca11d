/**
 * What a key may do beyond being valid (docs/api.md "Keys"): its scopes, the
 * models it may call, its rate limits and expiry — stored as JSON columns of api_keys and read back here.
 */
import type { ApiKeysTable } from '../db/schema.js';
import { defaultScopes, isScope, orderScopes, type Scope } from './scopes.js';

export interface RateLimits {
  requests_per_minute?: number;
  tokens_per_minute?: number;
}

/** The highest requests or tokens per minute a limit may have, wherever one is set (API, CLI, web UI). */
export const MAX_PER_MINUTE = 1_000_000_000;

/** A key's limits as the API and `gatelog keys … --json` show them: both, null for none. */
export function rateLimitsView(limits: RateLimits): {
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
} {
  return {
    requests_per_minute: limits.requests_per_minute ?? null,
    tokens_per_minute: limits.tokens_per_minute ?? null,
  };
}

export interface KeyControls {
  scopes: Scope[];
  allowed_models: string[];
  rate_limits: RateLimits;
  /** Epoch ms, or null. */
  expires_at: number | null;
}

/** The controls as stored; a column that cannot be read falls back to what a key made without them has. */
export function parseKeyControls(
  row: Pick<ApiKeysTable, 'scopes' | 'allowed_models' | 'rate_limits' | 'expires_at' | 'is_test'>,
): KeyControls {
  const scopes = jsonArray(row.scopes).filter(isScope);
  return {
    scopes: scopes.length > 0 ? orderScopes(scopes) : defaultScopes(row.is_test === 1),
    allowed_models: jsonArray(row.allowed_models),
    rate_limits: rateLimitsOf(row.rate_limits),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
  };
}

export function storedControls(
  controls: KeyControls,
): Pick<ApiKeysTable, 'scopes' | 'allowed_models' | 'rate_limits' | 'expires_at'> {
  return {
    scopes: JSON.stringify(orderScopes(controls.scopes)),
    allowed_models: JSON.stringify(controls.allowed_models),
    rate_limits: JSON.stringify(controls.rate_limits),
    expires_at: controls.expires_at,
  };
}

function jsonArray(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

function rateLimitsOf(text: string): RateLimits {
  try {
    const value = JSON.parse(text) as Record<string, unknown> | null;
    const limits: RateLimits = {};
    for (const name of ['requests_per_minute', 'tokens_per_minute'] as const) {
      const n = value?.[name];
      if (typeof n === 'number' && Number.isInteger(n) && n > 0) limits[name] = n;
    }
    return limits;
  } catch {
    return {};
  }
}
