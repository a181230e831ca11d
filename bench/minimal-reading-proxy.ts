/**
 * The least a logging gateway built on gatelog's own stack can do with a JSON call: Fastify in (the
 * request's JSON parsed, as a gateway must to read the model it routes and admits), undici out with the
 * client's bytes, the provider's whole answer read and parsed (as a gateway must to read the usage it
 * prices), its bytes sent back. No admission, no log, no metrics: the framework's and the parsing's share
 * of a call, the floor between the bare proxy (minimal-stream-proxy.ts) and gatelog in overhead-bench.ts.
 * Prints its URL on the first line.
 *
 *   node dist/bench/minimal-reading-proxy.js <upstream base URL, e.g. http://127.0.0.1:PORT/v1>
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

const base = new URL(process.argv[2]);
const basePath = base.pathname.replace(/\/+$/, '');
const pool = new Pool(base.origin, { keepAliveTimeout: 60_000 });
const app = Fastify({ logger: false, keepAliveTimeout: 60_000 });

// The raw bytes kept beside the parsed body: they are what goes upstream, unchanged.
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
  try {
    done(null, { raw: body, parsed: JSON.parse((body as Buffer).toString('utf8')) as { model?: unknown } });
  } catch (err) {
    done(err as Error, undefined);
  }
});

app.post('/*', async (req, reply) => {
  const { raw, parsed } = req.body as { raw: Buffer; parsed: { model?: unknown } };
  if (typeof parsed.model !== 'string') return reply.code(400).send({ error: 'model' });
  const upstream = await pool.request({
    path: `${basePath}${req.url}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw,
  });
  const answer = Buffer.from(await upstream.body.arrayBuffer());
  const usage = (JSON.parse(answer.toString('utf8')) as { usage?: { total_tokens?: number } }).usage;
  if (usage === undefined) reply.header('x-no-usage', '1');
  return reply.code(upstream.statusCode).type('application/json').send(answer);
});

const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(url);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
