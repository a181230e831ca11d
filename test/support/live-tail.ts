/** A live-tail client for tests: GET /api/request-logs/stream/ over real HTTP, its events parsed as they come. */
import assert from 'node:assert/strict';

export interface TailEvent {
  id: number | null;
  event: string;
  data: string;
}

export interface Tail {
  status: number;
  /** The error envelope, when the tail was refused. */
  body: unknown;
  headers: Headers;
  events: TailEvent[];
  comments: string[];
  /** The `log` events' items, in the order they came. */
  logs(): { id: number; item: Record<string, unknown> }[];
  /** How many `log` events came (without parsing them). */
  count(): number;
  /** Resolves when the server ended the stream (or the connection broke). */
  ended: Promise<void>;
  isEnded(): boolean;
  close(): void;
}

/** Opens a tail with `key`; `query` is the query string (with its `?`). */
export async function openTail(
  baseUrl: string,
  key: string,
  query = '',
  headers: Record<string, string> = {},
): Promise<Tail> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/request-logs/stream/${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
    signal: controller.signal,
  });
  const events: TailEvent[] = [];
  const comments: string[] = [];
  let done = false;
  const tail: Tail = {
    status: res.status,
    body: null,
    headers: res.headers,
    events,
    comments,
    logs: () =>
      events
        .filter((e) => e.event === 'log')
        .map((e) => ({ id: e.id as number, item: JSON.parse(e.data) as Record<string, unknown> })),
    count: () => events.reduce((n, e) => n + (e.event === 'log' ? 1 : 0), 0),
    ended: Promise.resolve(),
    isEnded: () => done,
    close: () => controller.abort(),
  };
  if (res.status !== 200) {
    tail.body = await res.json();
    done = true;
    return tail;
  }
  tail.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: TailEvent = { id: null, event: 'message', data: '' };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line.slice(1).trim());
              continue;
            }
            const colon = line.indexOf(': ');
            if (colon < 0) continue;
            const [field, value] = [line.slice(0, colon), line.slice(colon + 2)];
            if (field === 'id') event.id = Number(value);
            else if (field === 'event') event.event = value;
            else if (field === 'data') event.data += value;
            else continue;
            isEvent = true;
          }
          if (isEvent) events.push(event);
        }
      }
    } catch {
      // Aborted by close(), or cut by the server.
    } finally {
      done = true;
    }
  })();
  return tail;
}

/** Waits until `check` holds, for at most `ms`. */
export async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > ms) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
