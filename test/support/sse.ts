/**
 * One reader of server-sent event streams for the tests (chat completions, the Responses API,
 * Anthropic's Messages, a cache's replay): eventsource-parser reads the events, so that every test
 * parses a stream the way a client does. The reader also keeps what a test asserts beside the events:
 * each event's own text as it came (to compare bytes with what the provider wrote), the comments
 * (keepalives), when each event arrived, and whether the body ended cleanly or broke.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { createParser } from 'eventsource-parser';

export interface SseEvent {
  /** When the event was complete (its blank line read; performance.now()). */
  at: number;
  /** Its `event:` name; '' when it has none (chat completions' events). */
  event: string;
  /** Its data, as received (`[DONE]` included). */
  data: string;
  /** Its text as received, from its first line to its blank line included. */
  raw: string;
}

export interface SseRead {
  /** The whole body as received so far. */
  text: string;
  events: SseEvent[];
  /** Each comment line as received (`: keepalive`). */
  comments: string[];
  /** Whether the body ended cleanly (false when `until` stopped the reading first, or it broke). */
  ended: boolean;
  /** How the body broke instead of ending (the connection cut before the response's end), or null. */
  broke: string | null;
}

/** What to do with the body when `until` stops the reading. */
export type WhenStopped =
  /** Leave it unread and open: the test decides (aborts, or reads no more to exert backpressure). */
  | 'leave-open'
  /** Cancel it: the client goes away at once. */
  | 'cancel';

/** Splits the body into events as it is fed, one line at a time, so that each event's own text is known. */
class EventReader {
  private pending = '';
  private readonly parser = createParser({
    onEvent: (message) => {
      this.read.events.push({
        at: performance.now(),
        event: message.event ?? '',
        data: message.data,
        raw: this.pending,
      });
      this.pending = '';
    },
  });

  constructor(private readonly read: SseRead) {}

  feed(text: string): void {
    this.read.text += text;
    let from = 0;
    while (from < text.length) {
      const newline = text.indexOf('\n', from);
      const to = newline === -1 ? text.length : newline + 1;
      this.line(text.slice(from, to));
      from = to;
    }
  }

  private line(piece: string): void {
    const startsLine = this.pending === '' || this.pending.endsWith('\n');
    this.pending += piece;
    if (startsLine && piece.startsWith(':')) this.read.comments.push(piece.replace(/\r?\n$/, ''));
    this.parser.feed(piece);
    // A comment or a blank line outside any event belongs to none: the next event's text starts after it.
    if (this.pending.endsWith('\n') && /^(?::[^\n]*\n|\r?\n)+$/.test(this.pending)) this.pending = '';
  }
}

/**
 * Reads an event stream as it arrives, until it ends, breaks, or `until` says to stop (then the body is
 * left open, or cancelled when told so).
 */
export async function readSse(
  res: Response,
  until?: (read: SseRead) => boolean,
  whenStopped: WhenStopped = 'leave-open',
): Promise<SseRead> {
  const body = res.body!.getReader();
  const decoder = new TextDecoder();
  const read: SseRead = { text: '', events: [], comments: [], ended: false, broke: null };
  const events = new EventReader(read);
  for (;;) {
    let chunk: Awaited<ReturnType<typeof body.read>>;
    try {
      chunk = await body.read();
    } catch (err) {
      read.broke = `${String(err)} after:\n${read.text.slice(-600)}`;
      return read;
    }
    if (chunk.done) {
      read.ended = true;
      return read;
    }
    events.feed(decoder.decode(chunk.value, { stream: true }));
    if (until?.(read)) {
      if (whenStopped === 'cancel') await body.cancel();
      return read;
    }
  }
}

/** A stream read to its end, which must be a clean one. */
export async function readWholeSse(res: Response): Promise<SseRead> {
  const read = await readSse(res);
  assert.equal(read.broke, null, 'the stream broke instead of ending');
  return read;
}

/** The events of a body already read whole. */
export function sseEventsOf(text: string): SseEvent[] {
  const read: SseRead = { text: '', events: [], comments: [], ended: true, broke: null };
  new EventReader(read).feed(text);
  return read.events;
}

/** Each event of a body read whole: its name and its data, parsed. */
export function parsedEventsOf(text: string): { event: string; data: Json }[] {
  return sseEventsOf(text).map((e) => ({ event: e.event, data: dataOf(e) }));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are read as the JSON they are
type Json = any;

/** An event's data, parsed as the JSON it is. */
export const dataOf = (event: { data: string }): Json => JSON.parse(event.data);

/**
 * Writes a piece of an event stream as a provider does: when the reader's buffers are full, waits until
 * they drain (or the connection closes) before the next piece — the fakes' backpressure.
 */
export async function writeAsReaderReads(res: http.ServerResponse, text: string): Promise<void> {
  if (res.write(text)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** How a fake provider paces a streamed answer. */
export interface StreamPacing {
  /** The pause after the headers before the first event. */
  firstEventDelayMs?: number;
  /** The pause after the last event before the response ends (the connection held open). */
  endDelayMs?: number;
  /** The pause between one event and the next. */
  eventDelayMs?: number;
}
