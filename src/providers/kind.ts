/**
 * A provider kind (docs/api.md "Provider keys"): one way of calling model providers — OpenAI's wire
 * format, Anthropic's, Azure OpenAI's — with everything gatelog knows of it, defined in its own folder
 * (src/providers/<kind>/index.ts) and listed once in a registry (registry.ts) that the proxied routes,
 * the API, the CLI and the web UI read.
 */
import type { z } from 'zod';
import type { Config } from '../config.js';
import type { Authenticate, OutgoingRequest } from './authentication.js';
import type { ProviderProtocol } from './protocol.js';

/** The proxied routes, as a kind names the ones it serves. */
export const PROVIDER_ROUTES = ['chat', 'messages', 'responses', 'embeddings', 'transcription'] as const;
export type ProviderRoute = (typeof PROVIDER_ROUTES)[number];

/** What a call is authenticated with: one of the provider's keys and the provider's options. */
export interface ProviderCredential<Options> {
  readonly apiKey: string;
  /** As the kind's options schema accepted them when the provider was registered; {} for none. */
  readonly options: Options;
}

export interface ProviderKindDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  /** What `kind` says in the API and the CLI; a provider registered under this name is of this kind. */
  readonly name: string;
  /** What it is, for people ("Azure OpenAI"). */
  readonly label: string;
  /** The proxied routes that call providers of this kind; a model served by one is refused by the others. */
  readonly routes: readonly ProviderRoute[];
  /**
   * Models no registered provider claims that go to the provider named as this kind (choose-provider.ts):
   * gpt-* to openai, claude-* to anthropic.
   */
  readonly families: readonly RegExp[];
  /**
   * Where its API is for a provider registered without a base_url (gatelog's setting for it); null: a
   * provider of this kind must be given one, and the kind's name alone names no provider.
   */
  readonly defaultBaseUrl: ((config: Config) => string) | null;
  /** What a base_url of this kind looks like, for the form's placeholder and the refusal of a missing one. */
  readonly baseUrlHint: string;
  /**
   * Its own settings besides the ones every provider has (Azure's api_version): fields of the
   * registration and of its view in the API, `--flags` of the CLI, fields of the UI's form. A field's
   * `.meta({ title, description, examples })` is how the form and the help show it.
   */
  readonly options: z.ZodObject<Shape>;
  /** Its wire format: where a route's call goes, its errors, its usage, a chat translation. */
  readonly protocol: ProviderProtocol;
  /**
   * The headers that authenticate a call, given the whole request as it will be sent (the URL, every
   * other header, the body when it is whole), the key and the provider's options. Asynchronous, so that
   * a kind may sign the request or fetch a token first.
   */
  authenticate(
    request: OutgoingRequest,
    credential: ProviderCredential<z.output<z.ZodObject<Shape>>>,
  ): Promise<Readonly<Record<string, string>>>;
}

/** A kind as its folder defines it, its options typed; the registry holds it as any kind. */
export function defineProviderKind<Shape extends z.ZodRawShape>(
  kind: ProviderKindDefinition<Shape>,
): ProviderKindDefinition {
  return kind as unknown as ProviderKindDefinition;
}

/** How a call with this key is authenticated: the kind's `authenticate`, with the provider's options. */
export function authenticateWith(
  kind: ProviderKindDefinition,
  apiKey: string,
  options: Readonly<Record<string, unknown>> = {},
): Authenticate {
  return (request) => kind.authenticate(request, { apiKey, options });
}

/** Where a provider's calls go: its own base_url, else its kind's default; null: it has neither. */
export function baseUrlOf(
  kind: ProviderKindDefinition,
  registered: { baseUrl: string | null } | null,
  config: Config,
): string | null {
  return registered?.baseUrl ?? kind.defaultBaseUrl?.(config) ?? null;
}
