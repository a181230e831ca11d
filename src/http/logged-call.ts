/**
 * The options of a proxied route whose call is logged and whose body is JSON (chat completions,
 * responses, Anthropic's messages, embeddings), alike for each: a body the JSON parser refused reaches
 * the handler, which logs the call before answering 400; NUL is allowed only in the fields that go
 * upstream and into the log as JSON text (escaped); and the route answers gatelog's refusals and the
 * provider's errors.
 */
import type { z } from 'zod';
import { proxiedErrors, validatedByHandler } from './plumbing/schemas.js';

/** What a logged call may answer besides its 200: gatelog's refusals and the provider's errors. */
export const LOGGED_CALL_ERRORS = [400, 401, 402, 413, 415, 429, 502, 503, 504] as const;

export function loggedJsonCall<B extends z.ZodType, A extends z.ZodType>(route: {
  summary: string;
  body: B;
  answer: A;
  /** The top-level fields where NUL may be. */
  contentFields: ReadonlySet<string>;
  /** The answer may be an event stream (the call asked for one). */
  streams: boolean;
}) {
  const { contentFields } = route;
  return {
    config: {
      acceptsRejectedBody: true,
      nulAllowed: (path: readonly (string | number)[]) => contentFields.has(String(path[0])),
    },
    schema: {
      tags: ['Proxy'],
      summary: route.summary,
      ...(route.streams ? { produces: ['application/json', 'text/event-stream'] } : {}),
      body: validatedByHandler(route.body),
      response: { 200: route.answer, ...proxiedErrors(...LOGGED_CALL_ERRORS) },
    },
  };
}
