/** The `openai` kind: OpenAI and every OpenAI-compatible server (vLLM, Ollama, Groq, OpenRouter…). */
import { z } from 'zod';
import { defineProviderKind } from '../kind.js';
import { openaiProtocol } from './protocol.js';

export const openaiKind = defineProviderKind({
  name: 'openai',
  label: 'OpenAI-compatible',
  routes: ['chat', 'responses', 'embeddings', 'transcription'],
  families: [/^(gpt-|chatgpt-|text-embedding-|whisper-|ft:)/, /^o\d/],
  defaultBaseUrl: (config) => config.openaiBaseUrl,
  baseUrlHint: 'https://… — another OpenAI-compatible server',
  options: z.object({}),
  protocol: openaiProtocol,
  authenticate: async (_request, { apiKey }) => ({ authorization: `Bearer ${apiKey}` }),
});
