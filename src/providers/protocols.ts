/** Each provider kind's protocol (protocol.ts), one folder per kind. */
import { anthropicProtocol } from './anthropic/protocol.js';
import { azureProtocol } from './azure/protocol.js';
import type { ProviderKind } from './credentials.js';
import { openaiProtocol } from './openai/protocol.js';
import type { ProviderProtocol } from './protocol.js';

const PROTOCOLS: Readonly<Record<ProviderKind, ProviderProtocol>> = {
  openai: openaiProtocol,
  azure: azureProtocol,
  anthropic: anthropicProtocol,
};

export function protocolOf(kind: ProviderKind): ProviderProtocol {
  return PROTOCOLS[kind];
}
