/** The models a key may call as OpenAI's list of models (GET /api/models, docs/api.md "Model lists"). */
import type { z } from 'zod';
import type { AvailableModel } from './available.js';
import type { OpenAIModelList } from './contract.js';

export function openAIModelList(models: readonly AvailableModel[]): z.output<typeof OpenAIModelList> {
  return {
    object: 'list',
    data: models.map((m) => ({
      id: m.id,
      object: 'model',
      created: Math.floor(m.createdAt / 1000),
      owned_by: m.provider,
      provider: m.provider,
      pricing: m.pricing,
    })),
  };
}
