/** Light, dark, or the system's choice: kept in localStorage, applied as `data-theme` on <html>. */
import { signal } from '@preact/signals';

export type Theme = 'system' | 'light' | 'dark';

const STORE = 'gatelog.theme';

export const savedTheme = (): Theme => {
  const value = localStorage.getItem(STORE);
  return value === 'light' || value === 'dark' ? value : 'system';
};

export function applyTheme(theme: Theme): void {
  localStorage.setItem(STORE, theme);
  const dark = theme === 'dark' || (theme === 'system' && matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}

/** The theme chosen, for the header's switch and the ⌘K palette alike. */
export const theme = signal<Theme>(savedTheme());

export function setTheme(next: Theme): void {
  theme.value = next;
  applyTheme(next);
}
