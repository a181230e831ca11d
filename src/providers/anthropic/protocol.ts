/**
 * Anthropic's API: paths as Anthropic's own (`/v1/messages`), its own error body and usage, and chat
 * completions translated to its Messages API (chat.ts). The key and `anthropic-version` are sent by the
 * kind's authentication (index.ts).
 */
import type { ProviderProtocol } from '../protocol.js';
import { claudeChat } from './chat.js';
import { upstreamErrorOf } from './errors.js';
import { usageOf } from './usage.js';

/** The `anthropic-version` gatelog sends when the caller did not send one (a translated chat call). */
export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropicProtocol: ProviderProtocol = {
  path: (route) => route,
  // Anthropic serves no upload route.
  uploadsEarly: false,
  error: upstreamErrorOf,
  usage: usageOf,
  chat: claudeChat,
};
