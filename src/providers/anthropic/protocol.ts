/**
 * Anthropic's API: the key in `x-api-key`, the API version in `anthropic-version` (a caller's own
 * version header replaces it on the native route), paths as Anthropic's own (`/v1/messages`), its own
 * error body and usage, and chat completions translated to its Messages API (chat.ts).
 */
import type { ProviderProtocol } from '../protocol.js';
import { claudeChat } from './chat.js';
import { upstreamErrorOf } from './errors.js';
import { usageOf } from './usage.js';

/** The `anthropic-version` gatelog sends when the caller did not send one (a translated chat call). */
export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropicProtocol: ProviderProtocol = {
  defaultBaseUrl: (config) => config.anthropicBaseUrl,
  headers: (apiKey) => ({ 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION }),
  path: (route) => route,
  // Anthropic serves no upload route.
  uploadsEarly: false,
  error: upstreamErrorOf,
  usage: usageOf,
  chat: claudeChat,
};
