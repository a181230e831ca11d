/**
 * What the fake providers (OpenAI-shaped, the Responses API, Anthropic's Messages) do alike: wait,
 * cut a stream off part-way, and close their server with the answers they hold open.
 */
import type http from 'node:http';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Carries out the faults that cut a stream off without another word: 'stream-reset' resets the connection,
 * 'stream-silent' keeps it open and writes nothing more. True when `kind` was one of them: the stream stops.
 */
export async function cutOffStream(
  kind: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  hanging: Set<http.ServerResponse>,
): Promise<boolean> {
  if (kind === 'stream-reset') {
    // The events written so far leave first: the response holds its socket corked until the next tick,
    // and a reset at once would drop the last of them.
    await sleep(20);
    req.socket.destroy();
    return true;
  }
  if (kind === 'stream-silent') {
    hanging.add(res);
    return true;
  }
  return false;
}

/** Closes a fake provider's server, ending first the answers it holds open. */
export async function closeFakeServer(server: http.Server, hanging: Set<http.ServerResponse>): Promise<void> {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
