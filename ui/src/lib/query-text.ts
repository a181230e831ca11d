/**
 * The filters as one line of text — another face of the same conditions the chips and the URL hold:
 *
 *   model:gpt-4o cost>0.01 not status_code:200 customer_identifier~acme metadata__feature:"a b"
 *
 * A term is FIELD OP VALUE; `not FIELD:VALUE` (or `-FIELD:VALUE`) negates an equality. Operators:
 * `:` equals (`:a,b` is one of), `~` contains ignoring case, `>` `>=` `<` `<=` compare, `:null` has no
 * value (`-FIELD:null`: has one). A value is a word, or a double-quoted text with \" and \\ escapes;
 * unquoted numbers and true/false are numbers and booleans. All terms must hold, as the API ANDs its
 * filters; a field appears at most once. Pure: formatQueryText's output parses back to the same
 * conditions.
 */
import type { Condition, Operator } from './view-state.js';

export class QueryTextError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/** Full-text search: `search:"refund policy"`, several values (`search:refund,chargeback`) ORed with operator ''. */
const SEARCH_FIELD = 'search';

const COMPARISONS: Record<string, Operator> = { '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt' };
const SYMBOL: Partial<Record<Operator, string>> = { gte: '>=', lte: '<=', gt: '>', lt: '<', icontains: '~' };

type Value = Condition['values'][number];

/** A value as it is written: bare when it reads back as itself, else quoted. */
function formatValue(value: Value): string {
  if (typeof value !== 'string') return String(value);
  const bare =
    /^[^\s",:<>=~]+$/.test(value) &&
    !/^(true|false|null)$/.test(value) &&
    Number.isNaN(Number(value)) &&
    !value.startsWith('-');
  return bare ? value : `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

export function formatQueryText(conditions: readonly Condition[]): string {
  return conditions
    .map((c) => {
      if (c.operator === 'isnull') return `${c.values[0] === false ? '-' : ''}${c.field}:null`;
      if (c.operator === 'not') return `not ${c.field}:${formatValue(c.values[0])}`;
      // `search` takes several values with operator '' (any of them).
      if (c.operator === 'in' || (c.operator === '' && c.values.length > 1))
        return `${c.field}:${c.values.map(formatValue).join(',')}`;
      const symbol = SYMBOL[c.operator];
      if (symbol) return `${c.field}${symbol}${formatValue(c.values[0])}`;
      if (c.operator === '') return `${c.field}:${formatValue(c.values[0])}`;
      // Operators without a symbol of their own (iexact, contains, startswith, endswith): their own name.
      return `${c.field}.${c.operator}:${formatValue(c.values[0])}`;
    })
    .join(' ');
}

export function parseQueryText(text: string): Condition[] {
  let i = 0;
  const out: Condition[] = [];
  const seen = new Set<string>();
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const readValue = (): { value: Value; quoted: boolean } => {
    if (text[i] === '"') {
      const start = i++;
      let value = '';
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i++];
      }
      if (text[i] !== '"') throw new QueryTextError('A quoted value is not closed.', start);
      i++;
      return { value, quoted: true };
    }
    const start = i;
    while (i < text.length && !/[\s,]/.test(text[i])) i++;
    const raw = text.slice(start, i);
    if (raw === '') throw new QueryTextError('A value is missing.', start);
    if (raw === 'true' || raw === 'false') return { value: raw === 'true', quoted: false };
    return { value: Number.isNaN(Number(raw)) ? raw : Number(raw), quoted: false };
  };

  for (skipSpace(); i < text.length; skipSpace()) {
    const termStart = i;
    let negated = false;
    if (text.startsWith('not ', i)) {
      negated = true;
      i += 4;
      skipSpace();
    } else if (text[i] === '-') {
      negated = true;
      i++;
    }
    const fieldMatch = /^[A-Za-z_][\w-]*(\.[a-z]+)?/.exec(text.slice(i));
    if (!fieldMatch) throw new QueryTextError('A field name is expected here.', i);
    let field = fieldMatch[0];
    let named: Operator | null = null;
    if (fieldMatch[1]) {
      named = fieldMatch[1].slice(1) as Operator;
      field = field.slice(0, -fieldMatch[1].length);
      if (!['iexact', 'contains', 'startswith', 'endswith', 'icontains'].includes(named)) {
        throw new QueryTextError(`Unknown operator .${named}.`, i);
      }
    }
    i += fieldMatch[0].length;
    const symbol = ['>=', '<=', '>', '<', ':', '~'].find((s) => text.startsWith(s, i));
    if (!symbol) throw new QueryTextError(`After ${field}, one of : ~ > >= < <= is expected.`, i);
    i += symbol.length;
    if (seen.has(field)) throw new QueryTextError(`${field} appears twice: a field takes one condition.`, termStart);
    seen.add(field);
    if (symbol === ':' && !named && text.startsWith('null', i) && /^null(\s|$)/.test(text.slice(i))) {
      i += 4;
      out.push({ field, operator: 'isnull', values: [!negated] });
      continue;
    }
    const values: Value[] = [readValue().value];
    while (symbol === ':' && !named && text[i] === ',') {
      i++;
      values.push(readValue().value);
    }
    if (negated && (symbol !== ':' || named || values.length > 1)) {
      throw new QueryTextError('Only an equality can be negated (not FIELD:VALUE).', termStart);
    }
    const operator: Operator = named
      ? named
      : symbol === '~'
        ? 'icontains'
        : symbol !== ':'
          ? COMPARISONS[symbol]
          : negated
            ? 'not'
            : values.length > 1 && field !== SEARCH_FIELD
              ? 'in'
              : '';
    out.push({ field, operator, values });
  }
  return out;
}
