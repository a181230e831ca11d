/**
 * A kind's wire format (docs/api.md "Providers"; the rest of a kind is in kind.ts): where a route's call
 * goes, what its errors and its usage say, whether chat completions are translated to another API — and
 * nothing else. The proxied-call lifecycle, the routes and the stream pipeline ask a provider's protocol
 * and stay free of any one provider. `openai` is the base: OpenAI and every OpenAI-compatible server;
 * Azure OpenAI reuses its wire format, errors and usage with its own URLs; Anthropic has its own API.
 */
import type { ChatTranslation } from './chat-translation.js';
import type { TokenUsage } from './usage.js';

/** An error answer as gatelog logs it and answers its caller with. */
export interface UpstreamError {
  status: number;
  message: string;
  /** The provider's own code for it, when its body names one (the log's error_code; else upstream_error). */
  code?: string | null;
}

export interface ProviderProtocol {
  /**
   * Where a route's call goes, under the base URL: `route` is the path in the route's own API
   * (`/chat/completions`), `model` the model as the provider knows it, `options` the provider's own
   * (kind.ts: Azure's api_version).
   */
  path(route: string, model: string, options: Readonly<Record<string, unknown>>): string;
  /**
   * An upload may start upstream while it still arrives (speech-to-text, core/early-upload.ts):
   * only where a route's path does not depend on the model, which may arrive after the file.
   */
  readonly uploadsEarly: boolean;
  /** The provider's error answer (status ≥ 400) as the status, message and code the log keeps. */
  error(status: number, body: Buffer): UpstreamError;
  /** The `usage` object of the provider's answer (a chat completion's, a message's) in gatelog's one shape. */
  usage(usage: unknown): TokenUsage;
  /** Chat completions are translated to another of the provider's APIs (absent: the provider speaks OpenAI's). */
  readonly chat?: ChatTranslation;
}
