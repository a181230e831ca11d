/**
 * OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq, OpenRouter…): the route's own path,
 * OpenAI's error body and usage. The base the other kinds reuse (azure/protocol.ts).
 */
import type { ProviderProtocol } from '../protocol.js';
import { upstreamErrorOf } from './errors.js';
import { chatUsageOf } from './usage.js';

export const openaiProtocol: ProviderProtocol = {
  path: (route) => route,
  uploadsEarly: true,
  error: upstreamErrorOf,
  usage: chatUsageOf,
};
