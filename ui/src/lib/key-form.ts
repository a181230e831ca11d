/**
 * What the key form shows and sends (docs/api.md "Keys", "Rate limits"): a key as the form's
 * fields, what is wrong with a typed rate limit, the fields as the body that makes a key, or as the change
 * of a key (the fields that changed only: an expiry left alone is not sent again, so a key past it can
 * still be renamed). Pure.
 */

/** The scopes, in the server's order (src/auth/scopes.ts): a test asserts they agree. */
export const SCOPES = ['models', 'ingest', 'read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What each scope lets a key do, as the form explains it. */
export const SCOPE_TEXT: Record<Scope, string> = {
  models: 'call models through gatelog',
  ingest: 'send logs and traces',
  read: 'read logs, analytics, exports and datasets',
  admin: 'manage keys, provider keys, budgets and settings',
};

/** How long the old secret of a rotated key keeps working. */
export const GRACE_CHOICES = [
  { label: 'None: the old secret stops now', seconds: 0 },
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86_400 },
  { label: '1 week', seconds: 604_800 },
] as const;

/** The highest limit a minute the API takes (src/auth/key-controls.ts): a test asserts they agree. */
export const MAX_PER_MINUTE = 1_000_000_000;

/** A key's rate limits as the API reads them: null for none. */
export interface RateLimits {
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
}
export type LimitName = keyof RateLimits;

/** The limits as the form has them: each one's field of the API, its input and label. */
export const LIMITS = [
  { name: 'requests_per_minute', value: 'rpm', label: 'Requests per minute' },
  { name: 'tokens_per_minute', value: 'tpm', label: 'Tokens per minute' },
] as const;

/** The key fields the form reads (the API's key, without what the form never shows). */
export interface KeyFields {
  name: string;
  is_test: boolean;
  owner: { email: string };
  scopes: readonly Scope[];
  allowed_models: readonly string[];
  expires_at: string | null;
  rate_limits: RateLimits;
}

/** The form as typed: texts and ticks. */
export interface KeyFormValues {
  name: string;
  isTest: boolean;
  email: string;
  scopes: Scope[];
  /** One name or pattern per line (or comma-separated). */
  models: string;
  /** A datetime-local value ("2026-12-01T09:30"), in the browser's time zone; '' for never. */
  expires: string;
  /** Whole numbers as typed; '' for none. */
  rpm: string;
  tpm: string;
}

export const emptyForm = (): KeyFormValues => ({
  name: '',
  isTest: false,
  email: '',
  scopes: [...SCOPES],
  models: '',
  expires: '',
  rpm: '',
  tpm: '',
});

const pad = (n: number) => String(n).padStart(2, '0');

/** An instant as a datetime-local value, in the browser's time zone. */
export function localInput(iso: string | null): string {
  if (iso === null) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local value as the instant the API reads; '' is never; not a date: the text, for the API to refuse. */
export function expiresAtOf(text: string): string | null {
  const typed = text.trim();
  if (typed === '') return null;
  const d = new Date(typed);
  return Number.isNaN(d.getTime()) ? typed : d.toISOString();
}

/** "gpt-4o, claude-*\nopenai/*" → ["gpt-4o", "claude-*", "openai/*"]: empty pieces dropped, order kept. */
export const parseModelList = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((m) => m.trim())
    .filter((m) => m !== '');

/** A typed limit: none when blank, or a whole number from 1 to MAX_PER_MINUTE, or what is wrong with it. */
export function perMinuteOf(text: string): { value: number | null } | { problem: string } {
  const typed = text.trim();
  if (typed === '') return { value: null };
  const n = Number(typed);
  if (!/^\d+$/.test(typed) || n < 1) return { problem: 'Give a whole number of at least 1, or leave it empty.' };
  if (n > MAX_PER_MINUTE) return { problem: `At most ${MAX_PER_MINUTE.toLocaleString('en-US')}.` };
  return { value: n };
}

/** The first field the API would refuse (its `param`) and why, said before anything is sent; null: none. */
export function formProblem(values: KeyFormValues): { param: string; message: string } | null {
  for (const limit of LIMITS) {
    const read = perMinuteOf(values[limit.value]);
    if ('problem' in read) return { param: `rate_limits.${limit.name}`, message: `${limit.label}: ${read.problem}` };
  }
  return null;
}

/** The limits typed; one that is not a number is sent as typed, for the API to refuse by name. */
function limitsOf(values: KeyFormValues): Record<LimitName, number | string | null> {
  const one = (text: string) => {
    const read = perMinuteOf(text);
    return 'problem' in read ? text.trim() : read.value;
  };
  return { requests_per_minute: one(values.rpm), tokens_per_minute: one(values.tpm) };
}

/** The scopes ticked, in canonical order; a test key never holds admin. */
export function withScope(values: KeyFormValues, scope: Scope, on: boolean): Scope[] {
  return SCOPES.filter((s) => (s === scope ? on : values.scopes.includes(s)));
}

/** Ticking "test key" takes admin away (the API refuses it on a test key). */
export const asTest = (values: KeyFormValues, isTest: boolean): KeyFormValues => ({
  ...values,
  isTest,
  scopes: isTest ? values.scopes.filter((s) => s !== 'admin') : values.scopes,
});

export function formOf(key: KeyFields): KeyFormValues {
  return {
    name: key.name,
    isTest: key.is_test,
    email: key.owner.email,
    scopes: SCOPES.filter((s) => key.scopes.includes(s)),
    models: key.allowed_models.join('\n'),
    expires: localInput(key.expires_at),
    rpm: String(key.rate_limits.requests_per_minute ?? ''),
    tpm: String(key.rate_limits.tokens_per_minute ?? ''),
  };
}

/** The limits a key is made or changed with: a limit absent or null is none. */
export type LimitsBody = Partial<Record<LimitName, number | string | null>>;

/**
 * The body that makes a key of these values. Limits left empty are not sent: with neither typed the
 * server gives the new key the limits of the key making it; one typed, the other is none.
 */
export function createBody(values: KeyFormValues) {
  const limits = limitsOf(values);
  const typed: LimitsBody = {};
  for (const { name } of LIMITS) if (limits[name] !== null) typed[name] = limits[name];
  return {
    name: values.name.trim(),
    is_test: values.isTest,
    owner: { email: values.email.trim() },
    scopes: [...values.scopes],
    allowed_models: parseModelList(values.models),
    expires_at: expiresAtOf(values.expires),
    ...(Object.keys(typed).length > 0 ? { rate_limits: typed } : {}),
  };
}

export type KeyBody = ReturnType<typeof createBody>;
export type KeyChange = Partial<Omit<KeyBody, 'is_test'>>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What changed of `key` in the form: only those fields are sent (none: nothing to save). */
export function changeOf(key: KeyFields, values: KeyFormValues): KeyChange {
  const { is_test: _test, ...wanted } = createBody(values);
  const before = formOf(key);
  const change: KeyChange = {};
  if (wanted.name !== key.name) change.name = wanted.name;
  if (wanted.owner.email !== key.owner.email) change.owner = wanted.owner;
  if (!same(wanted.scopes, before.scopes)) change.scopes = wanted.scopes;
  if (!same(wanted.allowed_models, key.allowed_models)) change.allowed_models = wanted.allowed_models;
  // Compared as the form shows it (to the minute): an untouched expiry is not sent again.
  if (values.expires.trim() !== before.expires) change.expires_at = wanted.expires_at;
  // The API replaces a key's limits whole: both are sent, an empty one as null (none).
  const limits = limitsOf(values);
  if (LIMITS.some(({ name }) => limits[name] !== key.rate_limits[name])) change.rate_limits = limits;
  return change;
}
