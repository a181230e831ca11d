/**
 * The Budgets page, loaded when first shown (budgets.tsx and its form, a chunk of their own): the entry
 * chunk does not carry them, and a session that never opens the page never loads them.
 */
import type { ComponentProps } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Budgets as BudgetsView } from './budgets';

type Props = ComponentProps<typeof BudgetsView>;

let loaded: typeof BudgetsView | null = null;

export function BudgetsPage(props: Props) {
  const [View, setView] = useState<typeof BudgetsView | null>(() => loaded);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (View) return;
    let live = true;
    import('./budgets').then(
      (m) => {
        loaded = m.Budgets;
        if (live) setView(() => m.Budgets);
      },
      // A new build replaced the chunk this page knew.
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, []);
  if (View) return <View {...props} />;
  return failed ? (
    <p role="alert" class="error">
      The Budgets page could not be loaded; reload the page.
    </p>
  ) : (
    <p class="summary">Loading…</p>
  );
}
