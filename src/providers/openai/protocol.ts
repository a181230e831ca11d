/** OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq, OpenRouter…): a Bearer key, the route's own path. */
import type { ProviderProtocol } from '../protocol.js';

export const openaiProtocol: ProviderProtocol = {
  defaultBaseUrl: (config) => config.openaiBaseUrl,
  headers: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  path: (route) => route,
};
