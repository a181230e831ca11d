/**
 * A stored answer from the response cache given back in the form the call asked for (docs/api.md
 * "Response cache"): the JSON as it was stored (with request_breakdown when asked for), or a stream told
 * from it in the route's own events. Shared by every route cached whole; each says how to tell its
 * answer as a stream and where its request_breakdown event goes.
 */
import { Readable } from 'node:stream';
import type { ProxyResponse } from './call.js';

type Json = Record<string, unknown>;

export interface Replay {
  /** The call asked for a stream. */
  stream: boolean;
  /** The stored JSON text, and parsed. */
  stored: string;
  answer: Json;
  /** The call's request_breakdown, when it asked for one. */
  breakdown: Json | null;
  /** The stream of the answer, with `last` (the breakdown event, or '') before its end. */
  asStream(last: string): string;
  /** The request_breakdown event of the route's stream. */
  breakdownEvent(breakdown: Json): string;
}

export function replayedAnswer(replay: Replay): ProxyResponse {
  const { breakdown } = replay;
  if (!replay.stream) {
    const body = breakdown ? JSON.stringify({ ...replay.answer, request_breakdown: breakdown }) : replay.stored;
    return { status: 200, contentType: 'application/json', body };
  }
  return {
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    // A stream, as a live one is (its events are one write here: the provider is not in the way).
    body: Readable.from([replay.asStream(breakdown ? replay.breakdownEvent(breakdown) : '')]),
    headers: { 'cache-control': 'no-cache' },
  };
}
