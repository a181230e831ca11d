/**
 * Runs `work` while polling GET /health, and reports the slowest answer: the proof that one heavy or
 * hostile call does not hold the event loop for everyone else.
 */
export async function whilePolling<T>(
  baseUrl: string,
  work: () => Promise<T>,
): Promise<{ result: T; slowestMs: number }> {
  let slowestMs = 0;
  let done = false;
  const poll = async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${baseUrl}/health`);
      await res.arrayBuffer();
      slowestMs = Math.max(slowestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const poller = poll();
  try {
    return { result: await work(), slowestMs };
  } finally {
    done = true;
    await poller;
  }
}
