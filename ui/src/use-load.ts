/** Loading what a screen shows: the latest answer of `load`, run again when `deps` change or on reload(). */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; value: T };

/** Runs `load` whenever `deps` change, keeping only the latest answer. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stale = false;
    setLoaded({ state: 'loading' });
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
