/**
 * What the provider form sends (docs/api.md "Provider keys"), read from what a person types: the kind a
 * name defaults to, exactly as the API defaults it, and the models typed as one comma-separated line. Pure.
 */

export const PROVIDER_KINDS = ['openai', 'anthropic', 'azure'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** What each kind means, for the kind picker. */
export const KIND_TEXT: Record<ProviderKind, string> = {
  openai: 'openai (OpenAI-compatible)',
  anthropic: 'anthropic (Messages API)',
  azure: 'azure (Azure OpenAI)',
};

const isKind = (name: string): name is ProviderKind => (PROVIDER_KINDS as readonly string[]).includes(name);

/** The kind the API gives a provider posted without one: its name when that is a kind, else openai. */
export function defaultKind(provider: string): ProviderKind {
  const name = provider.trim();
  return isKind(name) ? name : 'openai';
}

/** "llama-*, mixtral-8x7b" → ["llama-*", "mixtral-8x7b"]; empty pieces are dropped, order kept. */
export const parseModels = (text: string): string[] =>
  text
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');

/** The models as the form shows them again. */
export const modelsText = (models: readonly string[] | null): string => (models ?? []).join(', ');
