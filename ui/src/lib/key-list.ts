/**
 * How the Keys page lists keys: in which order (last use first by default, so the newest use is at the
 * top), whether revoked keys show, each key's state and its facts (last use, rate limits) as short
 * texts. Pure.
 */
import type { KeyFields, RateLimits, Scope } from './key-form.js';

/** The list's fields this module reads. */
export interface ListedKey extends KeyFields {
  id: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export const KEY_SORTS = {
  used: 'Last used, newest first',
  created: 'Created, newest first',
  name: 'Name',
} as const;
export type KeySort = keyof typeof KEY_SORTS;

export const isKeySort = (text: string | null): text is KeySort => text !== null && text in KEY_SORTS;

const time = (iso: string | null) => (iso === null ? -Infinity : Date.parse(iso));

/** The keys in the order asked; ties (never used) by creation, newest first. */
export function sortKeys<K extends ListedKey>(keys: readonly K[], sort: KeySort): K[] {
  const byCreated = (a: K, b: K) => time(b.created_at) - time(a.created_at);
  const order: Record<KeySort, (a: K, b: K) => number> = {
    used: (a, b) => time(b.last_used_at) - time(a.last_used_at) || byCreated(a, b),
    created: byCreated,
    name: (a, b) => a.name.localeCompare(b.name) || byCreated(a, b),
  };
  return [...keys].sort(order[sort]);
}

/** The keys shown: revoked ones only when asked for. */
export const shownKeys = <K extends ListedKey>(keys: readonly K[], showRevoked: boolean): K[] =>
  showRevoked ? [...keys] : keys.filter((k) => k.revoked_at === null);

export type KeyState = 'active' | 'revoked' | 'expired';

export function keyState(key: ListedKey, now: number): KeyState {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

/** "just now", "5 min ago", "3 h ago", "2 days ago"; "in 4 days" ahead. */
export function agoText(iso: string, now: number): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  const ahead = seconds < 0;
  const s = Math.abs(seconds);
  const amount =
    s < 60
      ? null
      : s < 3600
        ? `${Math.floor(s / 60)} min`
        : s < 86_400
          ? `${Math.floor(s / 3600)} h`
          : `${Math.floor(s / 86_400)} day${s < 2 * 86_400 ? '' : 's'}`;
  if (amount === null) return ahead ? 'in a moment' : 'just now';
  return ahead ? `in ${amount}` : `${amount} ago`;
}

const SIZES = [
  [1e9, 'B'],
  [1e6, 'M'],
  [1e3, 'k'],
] as const;

/** A limit short and exact: 60, 1.5k, 100k, 2M; a number that would round is written whole (123,456). */
export function perMinuteText(n: number): string {
  const size = SIZES.find(([s]) => n >= s && (n * 10) % s === 0);
  return size ? `${n / size[0]}${size[1]}` : n.toLocaleString('en-US');
}

/** A key's limits as its row shows them ("60 rpm · 100k tpm"), "—" for none, and in words. */
export function limitsText(limits: RateLimits): { short: string; words: string; none: boolean } {
  const { requests_per_minute: rpm, tokens_per_minute: tpm } = limits;
  const short = [rpm === null ? '' : `${perMinuteText(rpm)} rpm`, tpm === null ? '' : `${perMinuteText(tpm)} tpm`];
  const words = [
    rpm === null ? '' : `${rpm.toLocaleString('en-US')} requests`,
    tpm === null ? '' : `${tpm.toLocaleString('en-US')} tokens`,
  ];
  const shown = short.filter(Boolean);
  if (shown.length === 0) return { short: '—', words: 'No rate limits of its own', none: true };
  return { short: shown.join(' · '), words: `At most ${words.filter(Boolean).join(' and ')} a minute`, none: false };
}

/** Whether a key's scopes lack `scope`: what a page that needs it says instead of an error. */
export const lacks = (scopes: readonly Scope[], scope: Scope): boolean => !scopes.includes(scope);
