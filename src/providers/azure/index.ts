/**
 * The `azure` kind: Azure OpenAI, OpenAI's wire format at a resource endpoint (which a provider of this
 * kind must be given), the key in an `api-key` header, the API version an option of the provider's.
 */
import { z } from 'zod';
import { defineProviderKind } from '../kind.js';
import { azureProtocol, DEFAULT_AZURE_API_VERSION } from './protocol.js';

export const azureKind = defineProviderKind({
  name: 'azure',
  label: 'Azure OpenAI',
  routes: ['chat', 'embeddings', 'transcription'],
  families: [],
  defaultBaseUrl: null,
  baseUrlHint: 'https://NAME.openai.azure.com',
  options: z.object({
    api_version: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({
        title: 'API version',
        description: `Azure OpenAI's api-version of its calls (default ${DEFAULT_AZURE_API_VERSION})`,
        examples: [DEFAULT_AZURE_API_VERSION],
      }),
  }),
  protocol: azureProtocol,
  authenticate: async (_request, { apiKey }) => ({ 'api-key': apiKey }),
});
