/**
 * The schemas of an organization's resource routes (POST /api/<things>/, GET|PATCH|DELETE
 * /api/<things>/{id}/: its keys, budgets, rate limits, views, evaluators, datasets), each with the
 * statuses every such route answers, so that they are documented the same for every resource.
 */
import { z } from 'zod';
import { AUTHENTICATED_ERRORS, BODY_ERRORS, errors } from './schemas.js';

/** The answer of a DELETE. */
export const NoContent = z.null().describe('No content');

/** The schemas of one resource's routes: its tags, and the path's parameters that name one of its items. */
export function resourceSchemas<P extends z.ZodType>(tags: string[], params: P) {
  return {
    /** POST: the new item (201); `more`: the statuses it adds (409 for a name or target already taken). */
    create: <B extends z.ZodType, T extends z.ZodType>(summary: string, body: B, item: T, ...more: number[]) => ({
      tags,
      summary,
      body,
      response: { 201: item, ...errors(...BODY_ERRORS, ...more) },
    }),
    /** GET one item; 404 when the organization has none of that id. */
    read: <T extends z.ZodType>(summary: string, item: T) => ({
      tags,
      params,
      summary,
      response: { 200: item, ...errors(...AUTHENTICATED_ERRORS, 404) },
    }),
    /** PATCH one item; 404 as read's, and what `more` adds (409 for a name already taken). */
    change: <B extends z.ZodType, T extends z.ZodType>(summary: string, body: B, item: T, ...more: number[]) => ({
      tags,
      params,
      summary,
      body,
      response: { 200: item, ...errors(...BODY_ERRORS, 404, ...more) },
    }),
    /** DELETE one item (204); 404 as read's. */
    remove: (summary: string) => ({
      tags,
      params,
      summary,
      response: { 204: NoContent, ...errors(...BODY_ERRORS, 404) },
    }),
  };
}
