/**
 * One SQL expression built from many `sql` pieces, flattened into a single piece: the same text and
 * parameters, but compiled in one pass instead of a walk through thousands of nested nodes.
 *
 * Why: a filter with a thousand values is a tree of some ten thousand Kysely nodes, and Kysely walks it
 * again every time a query holding it is compiled — milliseconds of the event loop each time, repeated
 * for the count and the page of one list call, while proxied calls wait. Flattened once, each compile
 * of the filter is a copy of its text and a push of its values.
 *
 * Column references are written out here as the compiler would write them (both dialects quote
 * identifiers in double quotes, a quote inside doubled); every other node (values above all) stays a
 * node, so values are still bound parameters, numbered where the final query puts them.
 */
import { type OperationNode, type RawBuilder, type ReferenceNode, type RawNode, sql } from 'kysely';

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `table.column` (or `column`) as text, or null for a reference of another shape (kept as a node). */
function referenceText(node: ReferenceNode): string | null {
  if (node.column.kind !== 'ColumnNode') return null;
  const column = quoted(node.column.column.name);
  if (!node.table) return column;
  const table = node.table.table;
  if (table.schema) return null;
  return `${quoted(table.identifier.name)}.${column}`;
}

interface Flat {
  fragments: string[];
  parameters: OperationNode[];
}

function append(node: RawNode, out: Flat): void {
  const { sqlFragments, parameters } = node;
  for (let i = 0; i < sqlFragments.length; i++) {
    out.fragments[out.fragments.length - 1] += sqlFragments[i];
    if (i >= parameters.length) continue;
    const child = parameters[i];
    const text = child.kind === 'ReferenceNode' ? referenceText(child as ReferenceNode) : null;
    if (child.kind === 'RawNode') append(child as RawNode, out);
    else if (text !== null) out.fragments[out.fragments.length - 1] += text;
    else {
      out.parameters.push(child);
      out.fragments.push('');
    }
  }
}

/** `expression` as one flat piece of SQL: same text, same parameters, cheap to compile again and again. */
export function flattenSql<T>(expression: RawBuilder<T>): RawBuilder<T> {
  const out: Flat = { fragments: [''], parameters: [] };
  append(expression.toOperationNode(), out);
  // The `sql` tag takes its pieces as a template's strings; a node given as a value stays that node.
  const strings = Object.assign([...out.fragments], { raw: out.fragments }) as unknown as TemplateStringsArray;
  return sql<T>(strings, ...out.parameters.map((node) => ({ toOperationNode: () => node })));
}
