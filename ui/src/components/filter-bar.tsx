/**
 * Filters as chips, and a form to add one: the list API's filter language one to one — a field, only
 * the operators its type takes, and values (typeahead from the counts the list returned). All chips
 * must hold, as the API ANDs its filters.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { formatQueryText, parseQueryText, QueryTextError } from '../lib/query-text';
import type { FilterOption } from '../api';
import type { Condition, Operator } from '../lib/view-state';
import { nearestField, type Refusal } from '../lib/filter-fields';

const OPERATOR_NAMES: Record<Operator, string> = {
  '': 'is',
  not: 'is not',
  iexact: 'is (any case)',
  contains: 'contains',
  icontains: 'contains (any case)',
  startswith: 'starts with',
  endswith: 'ends with',
  in: 'is one of',
  lt: '<',
  lte: '≤',
  gt: '>',
  gte: '≥',
  isnull: 'is empty',
};

const TEXT_OPS: Operator[] = ['', 'not', 'iexact', 'contains', 'icontains', 'startswith', 'endswith', 'in', 'isnull'];
const NUMBER_OPS: Operator[] = ['', 'not', 'gt', 'gte', 'lt', 'lte'];
const BOOLEAN_OPS: Operator[] = ['', 'not'];

/** Fields offered before the list has said which it counts. */
const CORE: Record<string, FilterOption['value_field_type']> = {
  model: 'selection',
  customer_identifier: 'selection',
  status_code: 'selection',
  log_type: 'selection',
  cost: 'number',
  latency: 'number',
};

const operatorsFor = (type: FilterOption['value_field_type'] | undefined, field: string): Operator[] =>
  type === 'number' || field === 'status_code' ? NUMBER_OPS : type === 'boolean' ? BOOLEAN_OPS : TEXT_OPS;

export function conditionText(c: Condition): string {
  const values = c.operator === 'isnull' ? '' : ` ${c.values.join(', ')}`;
  return `${c.field} ${OPERATOR_NAMES[c.operator]}${values}`;
}

interface Props {
  conditions: Condition[];
  options: Record<string, FilterOption>;
  /** Applies new filters; false when they were refused (the refusal then says why). */
  onChange(conditions: Condition[]): Promise<boolean> | boolean | void;
  /** The last filters refused, and why. */
  refusal: Refusal | null;
  /** The page URL's quick filters (`?feature=search`), passed on to the API as they are. */
  quick: readonly [string, string][];
  /** Quick-filter names the API read as metadata keys (its X-Gatelog-Metadata-Filters header). */
  metadataNames: readonly string[];
  onQuickChange(quick: [string, string][]): void;
  /** Shown beside the search box: on a phone, the control that unfolds the rest of the filters. */
  beside?: ComponentChildren;
}

const baseName = (param: string) => /^(.+)\[(value|operator|connector)\]$/.exec(param)?.[1] ?? param;

export function FilterBar({
  conditions,
  options,
  onChange,
  refusal,
  quick,
  metadataNames,
  onQuickChange,
  beside,
}: Props) {
  const fields = [...new Set([...Object.keys(CORE), ...Object.keys(options)])];
  const [field, setField] = useState('model');
  const type = options[field]?.value_field_type ?? CORE[field];
  const operators = operatorsFor(type, field);
  const [operator, setOperator] = useState<Operator>('');
  const [value, setValue] = useState('');
  const op = operators.includes(operator) ? operator : '';
  // The filters last tried: "did you mean …?" applies them with the field it names.
  const [tried, setTried] = useState<Condition[]>(conditions);
  const [textError, setTextError] = useState<string | null>(null);
  const apply = async (next: Condition[]) => {
    setTried(next);
    return (await onChange(next)) !== false;
  };

  const add = async (e: Event) => {
    e.preventDefault();
    const text = value.trim();
    if (op !== 'isnull' && text === '') return;
    const numeric = type === 'number' || field === 'status_code';
    const values: Condition['values'] =
      op === 'isnull' ? [true] : numeric && text !== '' && !Number.isNaN(Number(text)) ? [Number(text)] : [text];
    if (await apply([...conditions.filter((c) => c.field !== field), { field, operator: op, values }])) setValue('');
  };

  const quickNames = [...new Set(quick.map(([param]) => baseName(param)))];

  return (
    <div class="filters">
      <SearchBox conditions={conditions} onChange={apply} beside={beside} />
      <QueryText conditions={conditions} onChange={apply} error={textError} onError={setTextError} />
      {refusal && !textError && (
        <div role="alert" class="error refusal">
          <span>Not applied: {refusal.message}</span>
          {refusal.suggestion && (
            <span>
              {' '}
              Did you mean{' '}
              <button
                type="button"
                class="link"
                onClick={() =>
                  void apply(
                    tried.map((c) =>
                      c.field === refusal.suggestion!.from ? { ...c, field: refusal.suggestion!.to } : c,
                    ),
                  )
                }
              >
                {refusal.suggestion.to}
              </button>
              ?
            </span>
          )}
          <details>
            <summary>Fields you can filter on</summary>
            <p>{[...refusal.fields, 'metadata__<key>', 'scores__<evaluator_id>'].join(', ')}</p>
          </details>
        </div>
      )}
      <ul class="chips" aria-label="Active filters (all must hold)">
        {conditions.map((c) => (
          <li key={c.field} class="chip">
            <span>{conditionText(c)}</span>
            <button
              type="button"
              aria-label={`Remove filter ${conditionText(c)}`}
              onClick={() => void apply(conditions.filter((other) => other.field !== c.field))}
            >
              ×
            </button>
          </li>
        ))}
        {quickNames.map((name) => {
          const params = quick.filter(([param]) => baseName(param) === name);
          const value = params.find(([param]) => param === name || param === `${name}[value]`)?.[1] ?? '';
          const negated = params.some(([param, v]) => param === `${name}[operator]` && v === 'not');
          const asMetadata = metadataNames.includes(name);
          const text = `${asMetadata ? `metadata.${name}` : name} ${negated ? 'is not' : 'is'} ${value}`;
          const meant = asMetadata ? nearestField(name) : null;
          return (
            <li
              key={`quick-${name}`}
              class={`chip quick${asMetadata ? ' metadata' : ''}`}
              title={
                asMetadata
                  ? `From the link: ?${name}= is not a field gatelog knows, so it filters the metadata key "${name}".`
                  : `From the link: ?${name}=`
              }
            >
              <span>{text}</span>
              {meant && (
                // A link's name read as metadata that is a slip of a field's (?modle=): offer the field.
                <button
                  type="button"
                  class="link"
                  onClick={() =>
                    onQuickChange(
                      quick.map(([param, v]) => [
                        baseName(param) === name ? meant + param.slice(name.length) : param,
                        v,
                      ]),
                    )
                  }
                >
                  did you mean {meant}?
                </button>
              )}
              <button
                type="button"
                aria-label={`Remove filter ${text}`}
                onClick={() => onQuickChange(quick.filter(([param]) => baseName(param) !== name))}
              >
                ×
              </button>
            </li>
          );
        })}
      </ul>
      <form class="add-filter" onSubmit={add} aria-label="Add a filter">
        <select
          aria-label="Field"
          value={field}
          onChange={(e) => setField((e.currentTarget as HTMLSelectElement).value)}
        >
          {fields.map((f) => (
            <option key={f} value={f}>
              {options[f]?.display_name ?? f}
            </option>
          ))}
        </select>
        <select
          aria-label="Operator"
          value={op}
          onChange={(e) => setOperator((e.currentTarget as HTMLSelectElement).value as Operator)}
        >
          {operators.map((o) => (
            <option key={o} value={o}>
              {OPERATOR_NAMES[o]}
            </option>
          ))}
        </select>
        {op !== 'isnull' && (
          <input
            aria-label="Value"
            list="filter-values"
            value={value}
            onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
          />
        )}
        <datalist id="filter-values">
          {(options[field]?.value_choices ?? []).map((choice) => (
            <option key={String(choice.value)} value={String(choice.value)}>
              {`${choice.name} (${choice.count})`}
            </option>
          ))}
        </datalist>
        <button type="submit">Add filter</button>
      </form>
    </div>
  );
}

/**
 * Search over what the logs say (the API's `search` field: every word, ignoring case), applied with
 * Enter; emptied, it removes the search. The same condition as `search:` in the text filter and its chip.
 */
function SearchBox({
  conditions,
  onChange,
  beside,
}: {
  conditions: Condition[];
  onChange(c: Condition[]): Promise<boolean>;
  beside?: ComponentChildren;
}) {
  const current = conditions.find((c) => c.field === 'search');
  // Several values (ORed, from the text filter) are left to the text filter and the chip.
  const shown = current?.values.length === 1 ? String(current.values[0]) : '';
  const [text, setText] = useState(shown);
  useEffect(() => setText(shown), [shown]);
  return (
    <form
      class="search-box"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        const others = conditions.filter((c) => c.field !== 'search');
        const words = text.trim();
        void onChange(words === '' ? others : [...others, { field: 'search', operator: '', values: [words] }]);
      }}
    >
      <input
        type="search"
        aria-label="Search what was said"
        placeholder="Search prompts, answers, tool calls and errors"
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
      />
      {beside}
    </form>
  );
}

/**
 * The same filters as one line of text (lib/query-text.ts): edited and applied with Enter. What was
 * typed stays when the filters are refused, to be corrected.
 */
function QueryText({
  conditions,
  onChange,
  error,
  onError,
}: {
  conditions: Condition[];
  onChange(c: Condition[]): Promise<boolean>;
  error: string | null;
  onError(message: string | null): void;
}) {
  const formatted = formatQueryText(conditions);
  const [text, setText] = useState(formatted);
  useEffect(() => {
    setText(formatted);
    onError(null);
  }, [formatted]);
  return (
    <form
      class="query-text"
      onSubmit={(e) => {
        e.preventDefault();
        let parsed: Condition[];
        try {
          parsed = parseQueryText(text);
        } catch (err) {
          if (!(err instanceof QueryTextError)) throw err;
          return onError(`${err.message.replace(/\.$/, '')} (at character ${err.at + 1}).`);
        }
        onError(null);
        void onChange(parsed);
      }}
    >
      <input
        aria-label="Filters as text"
        placeholder="model:gpt-4o cost>0.01 not status_code:200"
        spellcheck={false}
        aria-invalid={error !== null}
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
      />
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </form>
  );
}
