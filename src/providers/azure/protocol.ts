/**
 * Azure OpenAI: OpenAI's wire format under a resource endpoint (the provider's base_url, which it must
 * have), one deployment per model — the model named in a call is the deployment — with the API version
 * (the provider's api_version option) in the query. Its errors and usage are OpenAI's.
 */
import { openaiProtocol } from '../openai/protocol.js';
import type { ProviderProtocol } from '../protocol.js';

/** The API version a provider registered without one is called with: Azure OpenAI's current GA version. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

export const azureProtocol: ProviderProtocol = {
  path: (route, model, options) => {
    const chosen = options.api_version;
    const version = encodeURIComponent(typeof chosen === 'string' ? chosen : DEFAULT_AZURE_API_VERSION);
    return `/openai/deployments/${encodeURIComponent(model)}${route}?api-version=${version}`;
  },
  // The deployment's URL names the model, which an upload's form may carry after its file.
  uploadsEarly: false,
  error: openaiProtocol.error,
  usage: openaiProtocol.usage,
};
