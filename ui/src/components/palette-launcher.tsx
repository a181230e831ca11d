/**
 * ⌘K / Ctrl+K anywhere opens the command palette (palette.tsx, loaded when first opened). Also keeps the
 * logs opened lately (from the URL's `log`), which the palette offers, and carries the palette's
 * explorer actions (export, add to a dataset) to the explorer, which owns those dialogs.
 */
import { useEffect, useState } from 'preact/hooks';
import { search } from '../router';
import type { Palette as PaletteView } from './palette';
import { remember } from '../palette-state';

export function PaletteLauncher({ apiKey }: { apiKey: string }) {
  const [open, setOpen] = useState(false);
  const [View, setView] = useState<typeof PaletteView | null>(null);
  const log = new URLSearchParams(search.value).get('log');
  useEffect(() => {
    if (log) remember(log);
  }, [log]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setOpen((o) => !o);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    if (!open || View) return;
    void import('./palette').then((m) => setView(() => m.Palette));
  }, [open]);
  return open && View ? <View apiKey={apiKey} onClose={() => setOpen(false)} /> : null;
}
