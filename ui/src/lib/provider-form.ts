/**
 * What the provider form shows and sends (docs/api.md "Provider keys", "Provider kinds"), read from the
 * kinds the server lists and what a person types: the kind a name defaults to, exactly as the API
 * defaults it; each option of the chosen kind as a field; the models typed as one comma-separated line.
 * Pure.
 */

/** The JSON Schema of one of a kind's options, as far as the form reads it. */
export interface OptionSchema {
  type?: string;
  title?: string;
  description?: string;
  examples?: unknown[];
}

/** A kind as GET /api/provider-kinds/ lists it. */
export interface ProviderKindInfo {
  kind: string;
  label: string;
  routes: string[];
  model_families: string[];
  base_url_required: boolean;
  base_url_hint: string;
  options: { properties?: Record<string, OptionSchema>; required?: string[] };
}

/** One of a kind's options as the form shows it. */
export interface OptionField {
  /** The field of the API's body and answer (`api_version`). */
  name: string;
  /** "API version". */
  label: string;
  required: boolean;
  description: string;
  placeholder: string;
  numeric: boolean;
}

/** What the kind picker says of a kind: `azure (Azure OpenAI)`. */
export const kindText = (kind: ProviderKindInfo): string => `${kind.kind} (${kind.label})`;

/** The kind the API gives a provider posted without one: its name when that is a kind, else the first kind. */
export function defaultKind(provider: string, kinds: readonly string[]): string {
  const name = provider.trim();
  return kinds.includes(name) ? name : (kinds[0] ?? '');
}

/** The fields of a kind's options, in the order its schema lists them; none for a kind not (yet) known. */
export function optionFields(kind: ProviderKindInfo | undefined): OptionField[] {
  const { properties = {}, required = [] } = kind?.options ?? {};
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    label: schema.title ?? name,
    required: required.includes(name),
    description: schema.description ?? '',
    placeholder: schema.examples?.length ? String(schema.examples[0]) : '',
    numeric: schema.type === 'number' || schema.type === 'integer',
  }));
}

/** Every option field of every kind, once: the fields a refusal of the API may name. */
export const allOptionNames = (kinds: readonly ProviderKindInfo[]): string[] => [
  ...new Set(kinds.flatMap((k) => optionFields(k).map((f) => f.name))),
];

/**
 * An option as typed → what is sent: nothing when blank (the kind's default), a number for a numeric
 * field that reads as one (else the text, for the API to refuse by name).
 */
export function optionValue(field: OptionField, text: string): string | number | undefined {
  const typed = text.trim();
  if (typed === '') return undefined;
  return field.numeric && Number.isFinite(Number(typed)) ? Number(typed) : typed;
}

/** An option's value as the form and the list show it again; '' when it is not set. */
export const optionText = (value: unknown): string => (value === null || value === undefined ? '' : String(value));

/** An option's name as a provider's row shows it: `api-version`, as the CLI's flag. */
export const optionName = (name: string): string => name.replace(/_/g, '-');

/** "llama-*, mixtral-8x7b" → ["llama-*", "mixtral-8x7b"]; empty pieces are dropped, order kept. */
export const parseModels = (text: string): string[] =>
  text
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');

/** The models as the form shows them again. */
export const modelsText = (models: readonly string[] | null): string => (models ?? []).join(', ');
