/**
 * A JSON text shown as a searchable, foldable tree (json-tree.tsx, loaded when first needed so that the
 * entry chunk stays small); indented text until then, and for a text that is not a JSON object or array.
 */
import { useEffect, useState } from 'preact/hooks';
import type { JsonTree as Tree } from './json-tree';

let loaded: typeof Tree | null = null;

export function JsonView({ text, title }: { text: string; title: string }) {
  const [Loaded, setLoaded] = useState<typeof Tree | null>(() => loaded);
  let value: unknown = undefined;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: shown as it is.
  }
  const branch = value !== null && typeof value === 'object';
  useEffect(() => {
    if (!branch || Loaded) return;
    let gone = false;
    void import('./json-tree').then((m) => {
      loaded = m.JsonTree;
      if (!gone) setLoaded(() => m.JsonTree);
    });
    return () => {
      gone = true;
    };
  }, [branch]);
  if (branch && Loaded) return <Loaded value={value as never} title={title} />;
  return <pre>{value === undefined ? text : JSON.stringify(value, null, 2)}</pre>;
}
