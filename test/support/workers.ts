/**
 * `gatelog serve --workers N` for tests: the server started with the flag, and requests each on a
 * connection of its own — the cluster hands out connections, not requests, in turn to its workers, so
 * a request on a fresh connection goes to the next worker while one on a kept-alive connection stays.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawnServer } from './cli.js';

export interface FreshAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON and assert its shape
  body: any;
}

/** Starts `gatelog serve --workers <workers>` (the start-up line comes once every worker listens). */
export function spawnWorkers(env: Record<string, string>, workers: number, onOutput?: (text: string) => void) {
  return spawnServer(env, onOutput, ['--workers', String(workers)]);
}

/** One request on a connection of its own, closed after the answer. */
export function fresh(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown } = {},
): Promise<FreshAnswer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { connection: 'close' };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const json = (res.headers['content-type'] ?? '').includes('json') && text !== '';
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: json ? JSON.parse(text) : null });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Which process answered GET /health, asked on a fresh connection: its pid and worker number. */
export async function healthOf(baseUrl: string): Promise<{ pid: number; worker: number | null }> {
  const res = await fresh(baseUrl, 'GET', '/health');
  assert.equal(res.status, 200, res.text);
  return { pid: res.body.pid as number, worker: res.body.worker as number | null };
}

/** The pids of the workers that answer `tries` GET /health in a row, each on a fresh connection. */
export async function answeringPids(baseUrl: string, tries: number): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < tries; i++) pids.add((await healthOf(baseUrl)).pid);
  return pids;
}
