/** Loading what a screen shows: the latest answer of `load`, run again when `deps` change or on reload(). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, isRetryable } from './api';
import { retryDelay } from './connection';

export type Loaded<T> = { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; value: T };

const sameDeps = (a: unknown[] | null, b: unknown[]) =>
  a !== null && a.length === b.length && a.every((d, i) => Object.is(d, b[i]));

/**
 * Runs `load` whenever `deps` change, keeping only the latest answer. When gatelog does not answer, what
 * was shown stays shown (the header says gatelog is not answering) and `load` is tried again with
 * backoff until it answers.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  // What is shown, with the deps it was loaded for: an answer for other deps is never shown, not even for
  // the one render before the effect below runs (a list's header would say a new order over old rows).
  const [shown, setShown] = useState<{ loaded: Loaded<T>; deps: unknown[] | null }>({
    loaded: { state: 'loading' },
    deps: null,
  });
  const [round, setRound] = useState(0);
  const attempts = useRef(0);
  const depsKey = useRef<unknown[] | null>(null);
  useEffect(() => {
    let stale = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const retry = sameDeps(depsKey.current, deps);
    depsKey.current = deps;
    // A retry of the same thing keeps what is shown; anything else is loaded afresh.
    if (!retry) {
      attempts.current = 0;
      setShown({ loaded: { state: 'loading' }, deps });
    }
    load().then(
      (value) => {
        if (stale) return;
        attempts.current = 0;
        setShown({ loaded: { state: 'done', value }, deps });
      },
      (err: unknown) => {
        if (stale) return;
        if (isRetryable(err)) {
          timer = setTimeout(() => setRound((r) => r + 1), retryDelay(attempts.current++));
          // Nothing shown yet: say what is happening rather than "loading" for ever.
          setShown((now) =>
            now.loaded.state === 'done' && sameDeps(now.deps, deps)
              ? now
              : { loaded: { state: 'error', message: (err as Error).message }, deps },
          );
          return;
        }
        setShown({ loaded: { state: 'error', message: err instanceof ApiError ? err.message : String(err) }, deps });
      },
    );
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [...deps, round]);
  const loaded: Loaded<T> = sameDeps(shown.deps, deps) ? shown.loaded : { state: 'loading' };
  return [loaded, () => setRound((r) => r + 1)];
}
