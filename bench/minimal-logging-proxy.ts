/**
 * The least a logging, admitting gateway on gatelog's own stack can do with a call — the floor the
 * overhead bench measures gatelog against, end to end rather than summed from parts:
 *
 * - the reading floor (minimal-reading-proxy.ts): Fastify in with the request's JSON parsed, undici out
 *   with the client's bytes;
 * - an exact shared admission before the call goes out (admission-floor.ts's least: SQLite, one immediate
 *   transaction holding a reservation, its budget period and a rate-limit bucket, settled every 20 ms;
 *   PostgreSQL, one committed upsert with `synchronous_commit = off`);
 * - the answer read for its log: a JSON answer parsed whole; a stream's bytes written to the client as
 *   they come, each event parsed (eventsource-parser, then its JSON) and its content gathered;
 * - one log built (gatelog's `buildNewLog`) and queued to gatelog's own LogWriter and inserter (on SQLite
 *   its writer thread), which writes it with its metadata, facet counts and rollups.
 *
 * No routing, no validation past the model, no metrics, no pricing beyond the log's. Prints its URL on
 * the first line.
 *
 *   node dist/bench/minimal-logging-proxy.js <upstream base URL> <database target JSON> <org JSON> <key id>
 */
import Fastify from 'fastify';
import { createParser } from 'eventsource-parser';
import pg from 'pg';
import { Pool } from 'undici';
import type { DatabaseTarget } from '../src/config.js';
import { DEFAULT_LOG_MAX_BYTES } from '../src/config.js';
import { connect } from '../src/db/connect.js';
import { loadPriceTable } from '../src/logs/pricing/price-table.js';
import { inserterFor } from '../src/logs/write/inserter.js';
import { buildNewLog } from '../src/logs/write/new-log.js';
import { LogWriter } from '../src/logs/write/writer.js';
import { leastSqliteAdmission } from './admission-floor.js';
import { benchAuth } from './ingest-bench.js';

const base = new URL(process.argv[2]);
const target = JSON.parse(process.argv[3]) as DatabaseTarget;
const org = JSON.parse(process.argv[4]) as { id: string; name: string };
const auth = benchAuth(org, process.argv[5]);
const basePath = base.pathname.replace(/\/+$/, '');
const pool = new Pool(base.origin, { keepAliveTimeout: 60_000 });
const handle = connect(target);
const prices = loadPriceTable(null);
const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, fatal() {}, child: () => silent } as never;
const writer = new LogWriter(inserterFor(handle), silent);

/** The admission's least database work, per dialect; `settle` runs every 20 ms. */
const admission = target.kind === 'sqlite' ? sqliteAdmission() : postgresAdmission(target.url);
const settler = setInterval(() => void admission.settle(), 20);

function sqliteAdmission() {
  return leastSqliteAdmission(handle.sqlite!, 'floor_');
}

function postgresAdmission(url: string) {
  const admitPool = new pg.Pool({ connectionString: url, max: 4, options: '-c synchronous_commit=off' });
  const ready = admitPool.query('create table if not exists floor_buckets (bucket text primary key, n bigint)');
  const upsert = `insert into floor_buckets values ('k', 1) on conflict (bucket) do update set n = floor_buckets.n + 1`;
  return { admit: () => ready.then(() => admitPool.query(upsert)), settle: () => undefined };
}

const app = Fastify({ logger: false, keepAliveTimeout: 60_000 });

// The raw bytes kept beside the parsed body: they are what goes upstream, unchanged.
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
  try {
    done(null, { raw: body, parsed: JSON.parse((body as Buffer).toString('utf8')) as Request });
  } catch (err) {
    done(err as Error, undefined);
  }
});

interface Request {
  model?: unknown;
  stream?: unknown;
  messages?: unknown;
  input?: unknown;
}

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** The call's log, queued to the writer as gatelog queues a proxied call's. */
function logCall(request: Request, output: unknown, usage: Usage | undefined, status: number, started: number) {
  const log = buildNewLog(
    {
      model: request.model as string,
      log_type: request.messages === undefined ? 'embedding' : 'chat',
      input: request.messages ?? request.input,
      output,
      prompt_tokens: usage?.prompt_tokens ?? 0,
      completion_tokens: usage?.completion_tokens ?? 0,
      status_code: status,
      stream: request.stream === true,
      latency: (performance.now() - started) / 1000,
    } as never,
    auth,
    prices,
    DEFAULT_LOG_MAX_BYTES,
  );
  writer.enqueue([log]);
}

app.post('/*', async (req, reply) => {
  const started = performance.now();
  const { raw, parsed } = req.body as { raw: Buffer; parsed: Request };
  if (typeof parsed.model !== 'string') return reply.code(400).send({ error: 'model' });
  await admission.admit();
  const upstream = await pool.request({
    path: `${basePath}${req.url}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw,
  });
  if (parsed.stream !== true) {
    const answer = Buffer.from(await upstream.body.arrayBuffer());
    const body = JSON.parse(answer.toString('utf8')) as { usage?: Usage; choices?: { message?: unknown }[] };
    logCall(parsed, body.choices?.[0]?.message ?? null, body.usage, upstream.statusCode, started);
    return reply.code(upstream.statusCode).type('application/json').send(answer);
  }
  // A stream: its bytes to the client as they come; each event parsed for the log.
  reply.hijack();
  const res = reply.raw;
  res.writeHead(upstream.statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let content = '';
  let usage: Usage | undefined;
  const parser = createParser({
    onEvent: ({ data }) => {
      if (data === '[DONE]') return;
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; usage?: Usage };
      const delta = chunk.choices?.[0]?.delta?.content;
      if (typeof delta === 'string') content += delta;
      if (chunk.usage) usage = chunk.usage;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
    if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    parser.feed(decoder.decode(chunk, { stream: true }));
  }
  res.end();
  logCall(parsed, { role: 'assistant', content }, usage, upstream.statusCode, started);
});

const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(url);
process.on('SIGTERM', () => {
  clearInterval(settler);
  void app
    .close()
    .then(() => writer.close())
    .finally(() => process.exit(0));
});
