/** "Compare" for two to four ticked logs: opens compare.tsx, loaded when first asked for. */
import { useEffect, useState } from 'preact/hooks';
import type { Compare as CompareView } from './compare';

export function CompareButton({ apiKey, ids }: { apiKey: string; ids: readonly string[] }) {
  const [open, setOpen] = useState(false);
  const [View, setView] = useState<typeof CompareView | null>(null);
  useEffect(() => {
    if (!open || View) return;
    void import('./compare').then((m) => setView(() => m.Compare));
  }, [open]);
  if (ids.length < 2 || ids.length > 4) return null;
  return (
    <>
      <button type="button" onClick={() => setOpen(true)} title="The ticked logs side by side">
        Compare {ids.length}
      </button>
      {open && View && <View apiKey={apiKey} ids={ids} onClose={() => setOpen(false)} />}
    </>
  );
}
