/**
 * A stored answer from the response cache given back in the form the call asked for (docs/api.md
 * "Response cache"): the JSON as it was stored (with request_breakdown when asked for), or a stream told
 * from it in the route's own events. Shared by every route cached whole; each says what the answer used,
 * how to tell it as a stream and where its request_breakdown event goes.
 */
import { Readable } from 'node:stream';
import type { ProxiedCall, ProxyResponse, UsageReport } from './call.js';
import { reportUsage } from './usage.js';

type Json = Record<string, unknown>;

/** What a route cached whole says of its stored answers (`answer`: the stored JSON, parsed). */
export interface Replay {
  /** What the answer used, as its log keeps it (the log is filled from the answer). */
  usage(answer: Json): UsageReport;
  /** The call's request_breakdown, asked only when the call asks for one. */
  breakdown(): Json;
  /** The stream of the answer, with `last` (the breakdown event, or '') before its end. */
  asStream(answer: Json, last: string): string;
  /** The request_breakdown event of the route's stream. */
  breakdownEvent(answer: Json, breakdown: Json): string;
}

/** The stored answer (its JSON text) for `call`, which asked for a stream or not. */
export async function replayedAnswer(
  call: ProxiedCall,
  stream: boolean,
  stored: string,
  replay: Replay,
): Promise<ProxyResponse> {
  const answer = JSON.parse(stored) as Json;
  // A hit costs nothing (usage.ts).
  await reportUsage(call, replay.usage(answer));
  const breakdown = call.params.requestBreakdown ? replay.breakdown() : null;
  if (!stream) {
    const body = breakdown ? JSON.stringify({ ...answer, request_breakdown: breakdown }) : stored;
    return { status: 200, contentType: 'application/json', body };
  }
  return {
    status: 200,
    contentType: 'text/event-stream; charset=utf-8',
    // A stream, as a live one is (its events are one write here: the provider is not in the way).
    body: Readable.from([replay.asStream(answer, breakdown ? replay.breakdownEvent(answer, breakdown) : '')]),
    headers: { 'cache-control': 'no-cache' },
  };
}
