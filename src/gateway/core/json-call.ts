/** What the JSON routes share: their bodies read, their calls upstream, their providers' JSON events. */
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { attemptedModel } from '../../logs/indexed-text.js';
import type { LogFields } from '../../logs/write/new-log.js';
import type { RouteAnswer, UpstreamCall } from './contract.js';
import type { ProxiedCall } from './call.js';
import { takePlatformParams } from './platform-params.js';

type Json = Record<string, unknown>;

/**
 * The call's JSON body sent to `path`, with the model as the provider knows it (a `name/` prefix
 * removed) in place of the caller's; an event stream accepted when the call streams.
 */
export function jsonCall(
  path: string,
  request: { upstreamBody: Json; model: string; stream: boolean },
  model: string,
  headers?: Record<string, string>,
): UpstreamCall {
  const { upstreamBody } = request;
  return {
    path,
    contentType: 'application/json',
    body: JSON.stringify(model === request.model ? upstreamBody : { ...upstreamBody, model }),
    accept: request.stream ? 'text/event-stream' : 'application/json',
    ...(headers === undefined ? {} : { headers }),
  };
}

/** An event's data, which must be a JSON object (else a 502: the stream cannot be read on). */
export function eventObject(data: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not an object.');
  return parsed as Json;
}

/**
 * A JSON call's body, read before it is checked: the model it names (a refused call is logged with it)
 * and the platform parameters taken out; what is left goes on to the route's own checks.
 */
export function takeJsonBody(call: ProxiedCall, body: unknown): Json {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
  }
  const fields = { ...(body as Json) };
  call.log.model = attemptedModel(fields.model);
  call.params = takePlatformParams(fields);
  return fields;
}

/**
 * The fields of a chat-like call's contract (OpenAPI) that gatelog reads besides its prompt: whether it
 * streams (`answer`: what its stream is), and what logSampling keeps. They go upstream as they are.
 */
export function chatLikeFields(answer: string) {
  return {
    stream: z
      .boolean()
      .optional()
      .describe(`true: the answer is ${answer} (text/event-stream), passed on event by event`),
    tools: z.array(z.unknown()).optional(),
    tool_choice: z.unknown().optional(),
    temperature: z.number().optional(),
  };
}

/**
 * A whole JSON answer for the client: `sent` as it is (the provider's answer, or its translation), or,
 * when the call asked for its request_breakdown, `parsed` (the same answer, read) with it added.
 */
export function jsonAnswer(
  call: ProxiedCall,
  sent: { contentType: string; body: Buffer | string },
  parsed: Json,
  breakdown: () => Json,
  keep: (() => string) | undefined,
): RouteAnswer {
  if (!call.params.requestBreakdown) {
    return { response: { status: 200, contentType: sent.contentType, body: sent.body }, keep };
  }
  const withBreakdown = { ...parsed, request_breakdown: breakdown() };
  return { response: { status: 200, contentType: 'application/json', body: JSON.stringify(withBreakdown) }, keep };
}

/** What a chat-like call asks of its model, as its log keeps it. */
export function logSampling(log: LogFields, fields: Json): void {
  log.tools = fields.tools;
  log.tool_choice = fields.tool_choice;
  log.temperature = typeof fields.temperature === 'number' ? fields.temperature : null;
}
