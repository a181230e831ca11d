/**
 * The live tail's connection (GET /api/request-logs/stream/, docs/api.md "Live tail"), loaded only when
 * the explorer's Live is switched on. The UI authenticates with an Authorization header, which an
 * EventSource cannot send: the stream is read with fetch and parsed with eventsource-parser instead. A
 * dropped stream is opened again after a pause, resuming after the last event it had (last_event_id).
 */
import { createParser } from 'eventsource-parser';
import { apiRoot, type LogItem } from './api';

/** Opens the tail for these URL filters; each matching new log goes to `onLog`. Returns its closer. */
export function openTail(key: string, query: string, onLog: (log: LogItem) => void): () => void {
  let closed = false;
  let lastId: string | null = null;
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const connect = async () => {
    controller = new AbortController();
    const q = new URLSearchParams(query);
    if (lastId) q.set('last_event_id', lastId);
    try {
      const res = await fetch(new URL(`request-logs/stream/?${q.toString()}`, apiRoot()), {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (!res.ok || !res.body) throw new Error(`the stream answered ${res.status}`);
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
      // Dropped, refused or cut: tried again below, unless closed.
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
