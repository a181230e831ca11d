/**
 * The command palette (⌘K / Ctrl+K): type to narrow, ↑/↓ to choose, Enter to run, Esc to close. Jumps
 * to a screen, applies a saved view, opens a log by id (typed, or one of those opened lately), and runs
 * an action: export, add to a dataset, switch the theme.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { listViews } from '../api';
import { formatScreen } from '../lib/screen';
import { formatViewState, parseViewState } from '../lib/view-state';
import { go, search } from '../router';
import { setTheme, theme } from '../theme';
import { useLoad } from '../use-load';
import { explorerAction, recentLogs } from '../palette-state';
import { applyView } from './views-menu';

interface Command {
  id: string;
  group: string;
  label: string;
  run(): void;
}

/** The explorer's screen as it is, with this log open (a log id is looked up in any time window). */
function openLog(id: string): void {
  const state = parseViewState(new URLSearchParams(search.value).get('v') ? '' : search.value);
  go(formatViewState({ ...state, log: id }));
}

/** Runs an explorer action: on the explorer, which opens the dialog. */
function onExplorer(action: 'export' | 'dataset'): void {
  if (new URLSearchParams(search.value).get('v')) go('');
  explorerAction.value = action;
}

const LOG_ID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export function Palette({ apiKey, onClose }: { apiKey: string; onClose(): void }) {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const [views] = useLoad(() => listViews(apiKey), [apiKey]);
  const input = useRef<HTMLInputElement>(null);
  const before = useRef<Element | null>(document.activeElement);

  useEffect(() => {
    input.current?.focus();
    const back = before.current;
    return () => (back instanceof HTMLElement ? back.focus() : undefined);
  }, []);

  const commands = useMemo((): Command[] => {
    const typed = query.trim();
    const all: Command[] = [
      { id: 'go-logs', group: 'Go to', label: 'Logs', run: () => go('') },
      { id: 'go-dashboard', group: 'Go to', label: 'Dashboard', run: () => go(formatScreen({ kind: 'dashboard' })) },
      {
        id: 'go-datasets',
        group: 'Go to',
        label: 'Datasets',
        run: () => go(formatScreen({ kind: 'datasets', page: 1 })),
      },
      { id: 'go-settings', group: 'Go to', label: 'Settings', run: () => go(formatScreen({ kind: 'settings' })) },
      {
        id: 'go-keys',
        group: 'Go to',
        label: 'Keys',
        run: () => go(formatScreen({ kind: 'keys', sort: 'used', showRevoked: true })),
      },
      { id: 'go-budgets', group: 'Go to', label: 'Budgets', run: () => go(formatScreen({ kind: 'budgets' })) },
      ...(views.state === 'done' ? views.value.results : []).map((v) => ({
        id: `view-${v.id}`,
        group: 'Saved view',
        label: v.name,
        run: () => applyView(v),
      })),
      ...recentLogs().map((id) => ({ id: `log-${id}`, group: 'Recent log', label: id, run: () => openLog(id) })),
      { id: 'export', group: 'Action', label: 'Export the matching logs…', run: () => onExplorer('export') },
      {
        id: 'dataset',
        group: 'Action',
        label: 'Add the matching logs to a dataset…',
        run: () => onExplorer('dataset'),
      },
      {
        id: 'theme',
        group: 'Action',
        label: `Switch to the ${document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark'} theme`,
        run: () => setTheme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark'),
      },
    ];
    const words = typed.toLowerCase().split(/\s+/).filter(Boolean);
    const found = all.filter((c) => words.every((w) => `${c.group} ${c.label}`.toLowerCase().includes(w)));
    // A typed log id: open it, whether or not it was opened lately.
    if (LOG_ID.test(typed) && !found.some((c) => c.label === typed)) {
      found.unshift({ id: 'log-typed', group: 'Go to log', label: typed, run: () => openLog(typed) });
    }
    return found;
  }, [query, views, theme.value]);

  const chosen = Math.min(active, Math.max(0, commands.length - 1));
  const run = (c: Command | undefined) => {
    if (!c) return;
    onClose();
    c.run();
  };

  return (
    <div class="palette-backdrop" onClick={onClose}>
      <div
        class="palette"
        role="dialog"
        aria-modal="true"
        aria-label="Command palette"
        onClick={(e) => e.stopPropagation()}
      >
        <input
          ref={input}
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={commands[chosen] ? `palette-${commands[chosen].id}` : undefined}
          aria-label="Command"
          placeholder="Go to, view, log id, action…"
          value={query}
          onInput={(e) => {
            setQuery((e.currentTarget as HTMLInputElement).value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setActive((chosen + 1) % Math.max(1, commands.length));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setActive((chosen - 1 + commands.length) % Math.max(1, commands.length));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              run(commands[chosen]);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              e.stopPropagation();
              onClose();
            }
          }}
        />
        <ul id="palette-list" role="listbox" aria-label="Commands">
          {commands.length === 0 && <li class="palette-empty">Nothing matches “{query}”.</li>}
          {commands.map((c, i) => (
            <li
              key={c.id}
              id={`palette-${c.id}`}
              role="option"
              aria-selected={i === chosen}
              onMouseMove={() => setActive(i)}
              onClick={() => run(c)}
            >
              <span class="palette-group">{c.group}</span> {c.label}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
