/**
 * How the Keys page lists keys: in which order (last use first by default, so the newest use is at the
 * top), whether revoked keys show, each key's state and its facts as short texts. Pure.
 */
import type { KeyFields, Scope } from './key-form.js';

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

/** Whether a key's scopes lack `scope`: what a page that needs it says instead of an error. */
export const lacks = (scopes: readonly Scope[], scope: Scope): boolean => !scopes.includes(scope);
