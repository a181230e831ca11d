/**
 * The live tail's connection (GET /api/request-logs/stream/, docs/api.md "Live tail"), loaded only when
 * the explorer's Live is switched on. The UI authenticates with an Authorization header, which an
 * EventSource cannot send: the stream is read with fetch and parsed with eventsource-parser instead. A
 * dropped stream is opened again after a pause, resuming after the last event it had (last_event_id).
 * The stream tells the header whether gatelog answers, as every other call does: with only Live on, it is
 * the one call the UI makes, and a gatelog that stopped would otherwise go unsaid.
 */
import { createParser } from 'eventsource-parser';
import { apiRoot, type LogItem } from './api';
import { markDown, markUp } from './connection';

/** Opens the tail for these URL filters; each matching new log goes to `onLog`. Returns its closer. */
export function openTail(key: string, query: string, onLog: (log: LogItem) => void): () => void {
  let closed = false;
  let lastId: string | null = null;
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = async () => {
    const own = new AbortController();
    controller = own;
    const q = new URLSearchParams(query);
    if (lastId) q.set('last_event_id', lastId);
    // A refusal (a 4xx) is an answer: gatelog is up, and only a dropped or cut stream says otherwise.
    let refused = false;
    try {
      const res = await fetch(new URL(`request-logs/stream/?${q.toString()}`, apiRoot()), {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
        signal: own.signal,
      });
      // No answer, or a proxy's 502/503/504 for one: gatelog is not answering (the banner says so).
      const unreachable = res.status === 502 || res.status === 503 || res.status === 504;
      if (unreachable) markDown(null);
      else markUp();
      if (!res.ok || !res.body) {
        refused = !unreachable;
        throw new Error(`the stream answered ${res.status}`);
      }
      const parser = createParser({
        onEvent(event) {
          if (event.id) lastId = event.id;
          if (event.event !== 'log') return;
          try {
            onLog(JSON.parse(event.data) as LogItem);
          } catch {
            // Not a log: skipped.
          }
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      // Dropped, refused or cut: tried again below, unless closed. A stream that could not be opened, or
      // broke, means gatelog stopped answering; the next stream that opens says it is back.
      if (!closed && !refused && !own.signal.aborted) markDown(null);
    }
    if (!closed) timer = setTimeout(() => void connect(), 2000);
  };
  void connect();
  return () => {
    closed = true;
    clearTimeout(timer);
    controller?.abort();
  };
}
