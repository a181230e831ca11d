/**
 * The least a Node.js proxy of a streamed chat completion can do — node:http in, undici out, the
 * provider's event-stream bytes piped to the client as they arrive: no validation, no parsing, no log —
 * as the floor gatelog's streaming path is compared with (bench/chat-stream-bench.ts). Prints its URL on
 * the first line.
 *
 *   node dist/bench/minimal-stream-proxy.js <upstream base URL, e.g. http://127.0.0.1:PORT/v1> [connections]
 *
 * `connections` bounds the upstream connections, as gatelog's per-provider pool is bounded; without it
 * there is no bound, so that this floor never queues a stream behind another.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const base = new URL(process.argv[2]);
const basePath = base.pathname.replace(/\/+$/, '');
const pool = new Pool(base.origin, {
  connections: process.argv[3] ? Number(process.argv[3]) : null,
  keepAliveTimeout: 60_000,
});

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    // Aborted when the client goes away first, so that the provider's stream stops too.
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    pool
      .request({
        path: `${basePath}${req.url ?? ''}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: Buffer.concat(chunks),
        signal: abort.signal,
      })
      .then(
        (upstream) => {
          res.writeHead(upstream.statusCode, {
            'content-type': String(upstream.headers['content-type'] ?? 'text/event-stream'),
            'cache-control': 'no-cache',
          });
          upstream.body.on('error', () => res.destroy());
          upstream.body.pipe(res);
        },
        () => {
          if (res.headersSent) res.destroy();
          else res.writeHead(502).end();
        },
      );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
