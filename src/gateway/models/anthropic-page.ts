/**
 * The models a key may call through Anthropic's Messages API as Anthropic's page of models
 * (GET /api/anthropic/v1/models, docs/api.md "Model lists"), paged as Anthropic pages it: `limit`
 * models after `after_id`, or the `limit` models just before `before_id`, or the first `limit`;
 * `has_more` says whether more lie beyond the page in that direction.
 */
import type { z } from 'zod';
import { AppError } from '../../errors.js';
import type { AvailableModel } from './available.js';
import type { AnthropicModelPage } from './contract.js';

export interface AnthropicPageQuery {
  limit: number;
  before_id?: string;
  after_id?: string;
}

export function anthropicModelPage(
  models: readonly AvailableModel[],
  query: AnthropicPageQuery,
): z.output<typeof AnthropicModelPage> {
  const { limit } = query;
  if (query.before_id !== undefined && query.after_id !== undefined) {
    throw new AppError(400, 'invalid_parameter', 'Give before_id or after_id, not both.', 'before_id');
  }
  const at = (param: 'before_id' | 'after_id', id: string): number => {
    const index = models.findIndex((m) => m.id === id);
    if (index < 0) {
      throw new AppError(400, 'invalid_parameter', `${param} '${id.slice(0, 200)}' is no model of this list.`, param);
    }
    return index;
  };
  let start: number;
  let end: number;
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    end = at('before_id', query.before_id);
    start = Math.max(0, end - limit);
    hasMore = start > 0;
  } else {
    start = query.after_id === undefined ? 0 : at('after_id', query.after_id) + 1;
    end = Math.min(models.length, start + limit);
    hasMore = end < models.length;
  }
  const data = models.slice(start, end).map((m) => ({
    type: 'model' as const,
    id: m.id,
    display_name: m.displayName,
    created_at: new Date(m.createdAt).toISOString(),
    provider: m.provider,
    pricing: m.pricing,
  }));
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
