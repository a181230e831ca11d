/**
 * A provider's event stream read into events, each with the bytes it came in: decoded as UTF-8 across
 * chunks, fed to eventsource-parser a line at a time so that an event's own text is known when the
 * parser dispatches it. What is not part of an event (a provider's own keepalive comment, a blank line
 * that ended none) is handed on as it came, at once.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { AppError } from '../../errors.js';

/** The longest event read (16 MB of text); a longer one is a 502, not memory without bound. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

export interface FramedStream {
  /** An event, and the text it came in. */
  event(message: EventSourceMessage, raw: string): void;
  /** Text outside any event, passed on as it came. */
  text(raw: string): void;
  /** The stream cannot be read on (an event too large): no more is fed once this is called. */
  fault(error: AppError): void;
  /** Feeding stops (the stream failed or is over). */
  stopped(): boolean;
}

export class EventFraming {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  /** The text of the event being read, since the last one was dispatched or passed on. */
  private pending = '';
  /** A field line was read since the last event ended: a blank line now ends an event. */
  private inEvent = false;

  constructor(private readonly sink: FramedStream) {
    this.parser = createParser({
      maxBufferSize: MAX_EVENT_CHARS,
      onEvent: (message) => {
        this.inEvent = false;
        const raw = this.pending;
        this.pending = '';
        this.sink.event(message, raw);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') {
          this.sink.fault(
            new AppError(502, 'upstream_invalid_response', 'The provider sent an event too large to read.'),
          );
        }
        // An unknown field or a bad retry value is the provider's own business: the event still counts.
      },
    });
  }

  /** No event is half-read: a comment written now cannot land inside one. */
  get betweenEvents(): boolean {
    return this.pending === '';
  }

  write(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    let from = 0;
    while (from < text.length && !this.sink.stopped()) {
      const newline = text.indexOf('\n', from);
      const to = newline === -1 ? text.length : newline + 1;
      this.feed(text.slice(from, to));
      from = to;
    }
  }

  /** The provider's stream ended: what followed its last event (an unterminated line), as it came. */
  end(): string {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    return rest;
  }

  private feed(piece: string): void {
    this.pending += piece;
    // The line this piece ends (null while a line is still arriving).
    const line = piece.endsWith('\n') ? piece.slice(0, piece.endsWith('\r\n') ? -2 : -1) : null;
    if (line !== null && line !== '' && !line.startsWith(':')) this.inEvent = true;
    this.parser.feed(piece);
    // A comment outside an event (a provider's own keepalive), or a blank line that ended no event (one
    // without data): passed on as it came, at once.
    if (line === '' || (line !== null && !this.inEvent)) {
      this.inEvent = false;
      if (this.pending !== '') this.sink.text(this.pending);
      this.pending = '';
    }
  }
}
