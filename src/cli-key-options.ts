/**
 * The settings of `gatelog keys create` (docs/api.md "Keys"): --scopes,
 * --allow-model, --expires, --rpm and --tpm — the same controls a key made over HTTP has.
 */
import { type KeyControls, MAX_PER_MINUTE, type RateLimits } from './auth/key-controls.js';
import { isScope, type Scope, SCOPES } from './auth/scopes.js';
import { CliError } from './cli-output.js';

export const KEY_CONTROL_OPTIONS = {
  scopes: { type: 'string' },
  'allow-model': { type: 'string', multiple: true },
  expires: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
} as const;

type Values = Record<string, string | boolean | string[] | undefined>;

export function keyControlsFrom(values: Values): Partial<KeyControls> {
  const controls: Partial<KeyControls> = {};
  if (typeof values.scopes === 'string') controls.scopes = scopesOf(values.scopes);
  const models = values['allow-model'];
  if (Array.isArray(models)) {
    controls.allowed_models = models
      .flatMap((m) => m.split(','))
      .map((m) => m.trim())
      .filter((m) => m !== '');
  }
  if (typeof values.expires === 'string') controls.expires_at = expiryOf(values.expires);
  // The CLI acts as the operator: without these the key has no limits of its own (not a maker's).
  const limits: RateLimits = {};
  if (typeof values.rpm === 'string') limits.requests_per_minute = perMinuteOf('--rpm', values.rpm);
  if (typeof values.tpm === 'string') limits.tokens_per_minute = perMinuteOf('--tpm', values.tpm);
  if (Object.keys(limits).length > 0) controls.rate_limits = limits;
  return controls;
}

/** A whole number of requests or tokens a minute, as the API takes it (1 to MAX_PER_MINUTE). */
function perMinuteOf(flag: string, text: string): number {
  const n = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || n < 1 || n > MAX_PER_MINUTE) {
    throw new CliError(`${flag}: '${text}' is not a whole number from 1 to ${MAX_PER_MINUTE}`);
  }
  return n;
}

function scopesOf(text: string): Scope[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.find((s) => !isScope(s));
  if (unknown !== undefined) throw new CliError(`--scopes: '${unknown}' is not a scope (${SCOPES.join(', ')})`);
  if (names.length === 0) throw new CliError(`--scopes: name at least one of ${SCOPES.join(', ')}`);
  return names.filter(isScope);
}

/** An ISO 8601 time, or a number of days or hours from now ("30d", "12h"). */
function expiryOf(text: string): number {
  const relative = /^(\d+)([dh])$/.exec(text.trim());
  const at = relative
    ? Date.now() + Number(relative[1]) * (relative[2] === 'd' ? 86_400_000 : 3_600_000)
    : Date.parse(text);
  if (!Number.isFinite(at)) throw new CliError(`--expires: '${text}' is neither a time (ISO 8601) nor like 30d or 12h`);
  if (at <= Date.now()) throw new CliError(`--expires: '${text}' is not in the future`);
  return at;
}
