/**
 * The least a Node.js proxy of the embeddings call can do — node:http in, undici out, the body passed
 * through, no validation, no JSON, no log — as a floor for what any Node implementation of the proxied
 * path can reach on this machine (bench/proxy-floor.ts). Prints its URL on the first line.
 *
 *   node dist/bench/minimal-proxy-server.js <upstream origin>
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const pool = new Pool(process.argv[2], { connections: 64 });
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const upstream = await pool.request({
      path: '/v1/embeddings',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    const body = Buffer.from(await upstream.body.arrayBuffer());
    res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
