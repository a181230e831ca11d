/**
 * What the key form shows and sends (docs/api.md "Keys"): a key as the form's
 * fields, the fields as the body that makes a key, or as the change of a key (the fields that changed
 * only: an expiry left alone is not sent again, so a key past it can still be renamed). Pure.
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

/** The key fields the form reads (the API's key, without what the form never shows). */
export interface KeyFields {
  name: string;
  is_test: boolean;
  owner: { email: string };
  scopes: readonly Scope[];
  allowed_models: readonly string[];
  expires_at: string | null;
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
}

export const emptyForm = (): KeyFormValues => ({
  name: '',
  isTest: false,
  email: '',
  scopes: [...SCOPES],
  models: '',
  expires: '',
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
  };
}

/** The body that makes a key of these values. */
export function createBody(values: KeyFormValues) {
  return {
    name: values.name.trim(),
    is_test: values.isTest,
    owner: { email: values.email.trim() },
    scopes: [...values.scopes],
    allowed_models: parseModelList(values.models),
    expires_at: expiresAtOf(values.expires),
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
  return change;
}
