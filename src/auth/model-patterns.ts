/**
 * A key's allowed models: exact names, `prefix*` patterns (`gpt-4o*`) and `provider/*` (every model a
 * named provider serves). An empty list allows every model.
 */

/** Whether a call to `model`, served by the provider named `provider`, is allowed. */
export function modelAllowed(patterns: readonly string[], model: string, provider: string | null): boolean {
  if (patterns.length === 0) return true;
  return patterns.some((p) => matches(p, model) || (provider !== null && p === `${provider}/*`));
}

function matches(pattern: string, model: string): boolean {
  return pattern.endsWith('*') ? model.startsWith(pattern.slice(0, -1)) : model === pattern;
}

/**
 * Whether every model `pattern` allows is allowed by `within` too (a key may hand out no model it
 * cannot call): an exact name or a prefix is covered by a pattern whose prefix it extends.
 */
export function patternWithin(pattern: string, within: readonly string[]): boolean {
  if (within.length === 0) return true;
  return within.some((w) => (w.endsWith('*') ? pattern.startsWith(w.slice(0, -1)) : pattern === w));
}

/** The first of `patterns` that `within` does not cover, or null when all are (an empty list is "any"). */
export function firstModelBeyond(patterns: readonly string[], within: readonly string[]): string | null {
  if (within.length === 0) return null;
  if (patterns.length === 0) return '*';
  return patterns.find((p) => !patternWithin(p, within)) ?? null;
}
