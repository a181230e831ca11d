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

/** A request unanswered this long fails (a hung connection must fail its test, not hang it). */
const FRESH_TIMEOUT_MS = 30_000;

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
    req.setTimeout(FRESH_TIMEOUT_MS, () =>
      req.destroy(new Error(`${method} ${path}: no answer in ${FRESH_TIMEOUT_MS} ms`)),
    );
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

/** A live tail read on a connection of its own: the `unique_id`s of the logs its events held, in order. */
export interface FreshTail {
  readonly uniqueIds: string[];
  close(): void;
}

/** Opens GET /api/request-logs/stream/ on a fresh connection; resolves once it is live (200). */
export function freshTail(baseUrl: string, key: string): Promise<FreshTail> {
  return new Promise((resolve, reject) => {
    const uniqueIds: string[] = [];
    const req = http.request(
      `${baseUrl}/api/request-logs/stream/`,
      { headers: { authorization: `Bearer ${key}` }, agent: false },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`the tail was refused: ${res.statusCode}`));
          res.resume();
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const lines = buffer.slice(0, end).split('\n');
            buffer = buffer.slice(end + 2);
            const data = lines.find((l) => l.startsWith('data: '));
            if (data && lines.includes('event: log')) {
              uniqueIds.push((JSON.parse(data.slice(6)) as { unique_id: string }).unique_id);
            }
          }
        });
        res.on('error', () => {});
        resolve({ uniqueIds, close: () => req.destroy() });
      },
    );
    req.on('error', (err) => reject(err));
    req.end();
  });
}
