/**
 * The `anthropic` kind: Anthropic's API, and chat completions translated to it (chat.ts). Its own
 * Messages API is a proxied route like the others (gateway/messages/), served to this kind alone.
 */
import { z } from 'zod';
import { defineProviderKind } from '../kind.js';
import { ANTHROPIC_VERSION, anthropicProtocol } from './protocol.js';

export const anthropicKind = defineProviderKind({
  name: 'anthropic',
  label: 'Anthropic',
  routes: ['chat', 'messages'],
  families: [/^claude-/],
  defaultBaseUrl: (config) => config.anthropicBaseUrl,
  baseUrlHint: "https://… — default: Anthropic's API",
  options: z.object({}),
  protocol: anthropicProtocol,
  authenticate: async (request, { apiKey }) => ({
    'x-api-key': apiKey,
    // A caller's own version, which the Messages route passes on, is the one sent.
    'anthropic-version': request.headers['anthropic-version'] ?? ANTHROPIC_VERSION,
  }),
});
