/** Loading what a screen shows: the latest answer of `load`, run again when `deps` change or on reload(). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; value: T };

const sameDeps = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

/**
 * Runs `load` whenever `deps` change, keeping only the latest answer. New deps show "loading"; reload()
 * keeps what is shown until the new answer arrives, so a list refreshed after an edit does not blink away.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const shownDeps = useRef<unknown[] | null>(null);
  useEffect(() => {
    let stale = false;
    if (shownDeps.current === null || !sameDeps(shownDeps.current, deps)) setLoaded({ state: 'loading' });
    shownDeps.current = deps;
    load().then(
      (value) => !stale && setLoaded({ state: 'done', value }),
      (err: unknown) =>
        !stale && setLoaded({ state: 'error', message: err instanceof ApiError ? err.message : String(err) }),
    );
    return () => {
      stale = true;
    };
  }, [...deps, round]);
  return [loaded, () => setRound((r) => r + 1)];
}
