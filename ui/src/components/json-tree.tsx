/**
 * A JSON value as a tree (loaded lazily, json-view.tsx): objects and arrays fold, the large ones folded
 * from the start (many entries, or much text), long strings cut with a "show all"; a search box marks
 * every key and value holding the words and unfolds the branches down to them.
 */
import type { JSX } from 'preact';
import { useMemo, useState } from 'preact/hooks';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A branch with more entries than this, or more text, starts folded (the root excepted). */
const MANY = 20;
const MUCH_TEXT = 2_000;
const LONG_STRING = 300;

const isBranch = (v: Json): v is Json[] | { [key: string]: Json } => v !== null && typeof v === 'object';
const entriesOf = (v: Json[] | { [key: string]: Json }): [string, Json][] =>
  Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
const textOf = (v: Json) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The paths ("" the root, "/a/0/b" below) of the branches holding a match, and how many matches. */
function matchesOf(root: Json, needle: string): { open: Set<string>; count: number } {
  const open = new Set<string>();
  let count = 0;
  const walk = (value: Json, path: string, key: string | null): boolean => {
    let found = key !== null && key.toLowerCase().includes(needle);
    if (found) count++;
    if (isBranch(value)) {
      for (const [k, v] of entriesOf(value)) if (walk(v, `${path}/${k}`, Array.isArray(value) ? null : k)) found = true;
      if (found) open.add(path);
    } else if (textOf(value).toLowerCase().includes(needle)) {
      count++;
      found = true;
    }
    return found;
  };
  if (needle !== '') walk(root, '', null);
  return { open, count };
}

/** `text` with each occurrence of `needle` (any case) marked. */
function marked(text: string, needle: string): JSX.Element | string {
  if (needle === '') return text;
  const lower = text.toLowerCase();
  const parts: (JSX.Element | string)[] = [];
  let at = 0;
  for (let i = lower.indexOf(needle); i >= 0; i = lower.indexOf(needle, i + needle.length)) {
    parts.push(text.slice(at, i), <mark key={i}>{text.slice(i, i + needle.length)}</mark>);
    at = i + needle.length;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

interface Ctx {
  needle: string;
  open: Set<string>;
}

function Leaf({ value, needle }: { value: Json; needle: string }) {
  const [whole, setWhole] = useState(false);
  if (typeof value !== 'string') {
    return <span class={`json-${value === null ? 'null' : typeof value}`}>{marked(String(value), needle)}</span>;
  }
  const long = value.length > LONG_STRING && !whole && !value.toLowerCase().includes(needle || '\u0000');
  return (
    <span class="json-string">
      "{marked(long ? value.slice(0, LONG_STRING) : value, needle)}
      {long && (
        <>
          …"{' '}
          <button type="button" class="link" onClick={() => setWhole(true)}>
            show all {value.length} characters
          </button>
        </>
      )}
      {!long && '"'}
    </span>
  );
}

function Node({
  name,
  value,
  path,
  ctx,
  depth,
}: {
  name: string | null;
  value: Json;
  path: string;
  ctx: Ctx;
  depth: number;
}) {
  const label = name === null ? null : <span class="json-key">{marked(name, ctx.needle)}: </span>;
  if (!isBranch(value)) {
    return (
      <li>
        {label}
        <Leaf value={value} needle={ctx.needle} />
      </li>
    );
  }
  const entries = entriesOf(value);
  const large = depth > 0 && (entries.length > MANY || JSON.stringify(value).length > MUCH_TEXT);
  const open = ctx.needle !== '' ? ctx.open.has(path) || depth === 0 : !large;
  const shape = Array.isArray(value) ? `[${entries.length} items]` : `{${entries.length} keys}`;
  return (
    <li>
      <details open={open}>
        <summary>
          {label}
          <span class="json-shape">{shape}</span>
        </summary>
        <ul>
          {entries.map(([k, v]) => (
            <Node
              key={k}
              name={Array.isArray(value) ? null : k}
              value={v}
              path={`${path}/${k}`}
              ctx={ctx}
              depth={depth + 1}
            />
          ))}
        </ul>
      </details>
    </li>
  );
}

export function JsonTree({ value, title }: { value: Json; title: string }) {
  const [query, setQuery] = useState('');
  const needle = query.trim().toLowerCase();
  const { open, count } = useMemo(() => matchesOf(value, needle), [value, needle]);
  return (
    <div class="json-tree" role="group" aria-label={`${title} as a tree`}>
      <div class="json-search">
        <input
          type="search"
          aria-label={`Search in ${title}`}
          placeholder="Search keys and values"
          value={query}
          onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)}
        />
        {needle !== '' && (
          <span aria-live="polite">
            {count} {count === 1 ? 'match' : 'matches'}
          </span>
        )}
      </div>
      <ul class="json-root">
        <Node name={null} value={value} path="" ctx={{ needle, open }} depth={0} />
      </ul>
    </div>
  );
}
