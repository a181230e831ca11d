/** What the tests of POST /api/responses send and look for, shared by its split files. */
import { DEFAULT_RESPONSE_TEXT } from '../support/fake-responses.js';
import type { SseEvent } from '../support/sse.js';
import { fake, OPENAI_PRICES as PRICES, postTo } from '../support/proxied-route.js';

export const HELLO = DEFAULT_RESPONSE_TEXT.join('');

/** What a call costs at the catalog's prices, cached input at its own price. */
export const costOf = (model: keyof typeof PRICES, input: number, output: number, cached = 0) =>
  ((input - cached) * PRICES[model].input + cached * PRICES[model].cached + output * PRICES[model].output) / 1e6;

export const isDelta = (event: SseEvent) => event.event === 'response.output_text.delta';

/** POSTs a JSON body to the route as it is (no client in between). */
export const post = (body: Record<string, unknown>, signal?: AbortSignal) => postTo('/api/responses', body, signal);

/** The last POST /responses exchange the fake saw, and the JSON body it was sent. */
export const last = () => fake.responses.at(-1)!;
export const sentJson = () => last().request.json as Record<string, unknown>;
/** The upstream's events as it wrote them. */
export const upstreamEvents = () => last().sent.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`);
