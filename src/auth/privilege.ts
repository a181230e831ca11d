/**
 * The privilege rule (docs/api.md "Keys"): a request needs its route's scope,
 * and no key makes or changes a key with more than it has — scopes, models, rate limits, expiry.
 */
import { AppError } from '../errors.js';
import type { AuthContext } from './authenticator.js';
import type { KeyControls, RateLimits } from './key-controls.js';
import { firstModelBeyond } from './model-patterns.js';
import type { Scope } from './scopes.js';

export function requireScope(auth: Pick<AuthContext, 'scopes'>, scope: Scope): void {
  if (!auth.scopes.includes(scope)) {
    throw new AppError(
      403,
      'permission_denied',
      `This key does not have the '${scope}' scope, which this request needs.`,
      null,
    );
  }
}

/**
 * Refuses (403 permission_denied) controls that give more than the caller's key has: a scope it lacks,
 * a model outside its own list, a higher rate limit or none where it has one, a later expiry or none.
 */
export function requireWithin(caller: AuthContext, wanted: KeyControls, what: string): void {
  const deny = (message: string, param: string) => {
    throw new AppError(403, 'permission_denied', `${what} ${message}`, param);
  };
  const scope = wanted.scopes.find((s) => !caller.scopes.includes(s));
  if (scope !== undefined) deny(`has the '${scope}' scope, which the key making this request does not have.`, 'scopes');
  const model = firstModelBeyond(wanted.allowed_models, caller.allowedModels);
  if (model !== null) {
    deny(
      model === '*'
        ? 'allows every model; the key making this request may call only its allowed_models.'
        : `allows '${model}', which the key making this request may not call.`,
      'allowed_models',
    );
  }
  for (const name of ['requests_per_minute', 'tokens_per_minute'] as const) {
    if (!withinLimit(wanted.rate_limits, caller.rateLimits, name)) {
      deny(
        `has a higher ${name} than the ${caller.rateLimits[name]} of the key making this request.`,
        `rate_limits.${name}`,
      );
    }
  }
  if (caller.expiresAt !== null && (wanted.expires_at === null || wanted.expires_at > caller.expiresAt)) {
    deny(
      `outlives the key making this request, which expires at ${new Date(caller.expiresAt).toISOString()}.`,
      'expires_at',
    );
  }
}

function withinLimit(wanted: RateLimits, caller: RateLimits, name: keyof RateLimits): boolean {
  const limit = caller[name];
  if (limit === undefined) return true;
  const asked = wanted[name];
  return asked !== undefined && asked <= limit;
}
