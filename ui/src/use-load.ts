/** Loading what a screen shows: the latest answer of `load`, run again when `deps` change or on reload(). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, isRetryable } from './api';
import { retryDelay } from './connection';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; value: T };

/**
 * Runs `load` whenever `deps` change, keeping only the latest answer. When gatelog does not answer, what
 * was shown stays shown (the header says gatelog is not answering) and `load` is tried again with
 * backoff until it answers.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const attempts = useRef(0);
  const depsKey = useRef<unknown[] | null>(null);
  useEffect(() => {
    let stale = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sameDeps = depsKey.current !== null && deps.every((d, i) => Object.is(d, depsKey.current![i]));
    depsKey.current = deps;
    // A retry of the same thing keeps what is shown; anything else is loaded afresh.
    if (!sameDeps) {
      attempts.current = 0;
      setLoaded({ state: 'loading' });
    }
    load().then(
      (value) => {
        if (stale) return;
        attempts.current = 0;
        setLoaded({ state: 'done', value });
      },
      (err: unknown) => {
        if (stale) return;
        if (isRetryable(err)) {
          timer = setTimeout(() => setRound((r) => r + 1), retryDelay(attempts.current++));
          // Nothing shown yet: say what is happening rather than "loading" for ever.
          setLoaded((now) => (now.state === 'done' ? now : { state: 'error', message: (err as Error).message }));
          return;
        }
        setLoaded({ state: 'error', message: err instanceof ApiError ? err.message : String(err) });
      },
    );
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [...deps, round]);
  return [loaded, () => setRound((r) => r + 1)];
}
