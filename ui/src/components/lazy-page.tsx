/**
 * A page loaded when first shown, a chunk of its own (the Budgets page, the Sessions page): the entry
 * chunk does not carry it, and a visit that never opens the page never loads it.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** The page `load` gives, as a component that says "Loading…" until it is there; `name` names it. */
export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>, name: string): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function LazyPage(props: P) {
    const [View, setView] = useState<ComponentType<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (View) return;
      let live = true;
      load().then(
        (page) => {
          loaded = page;
          if (live) setView(() => page);
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
        The {name} page could not be loaded; reload the page.
      </p>
    ) : (
      <p class="summary">Loading…</p>
    );
  };
}
