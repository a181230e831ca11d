/**
 * OpenTelemetry ingestion against the logging API's, per database: spans stored per second when two
 * exporters send 1,000-span protobuf exports back to back (each span a GenAI chat call with its messages
 * and tokens, fresh ids every export, so every span is looked up and stored), against logs stored per
 * second through `POST /api/request-logs/batch/` (two clients, 1,000-log batches) in the same run, in
 * alternating rounds. Target: OTLP ≥ 50 % of the batch rate.
 *
 *   npm run bench -- otlp [--db sqlite|postgres] [--seconds 8] [--rounds 3]
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { otlpTypes } from '../src/otel/otlp-proto.js';
import { freshDatabase, startGatelog } from './gatelog-process.js';
import { logBody } from './ingest-bench.js';
import { record } from './summary.js';

const SPANS = 1000;

const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: value } });

/** One export of SPANS chat spans (ten traces of a root and 99 calls), protobuf, fresh ids. */
function exportBody(): Buffer {
  const { request } = otlpTypes();
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: SPANS }, (_, i) => {
    const root = i % 100 === 0;
    return {
      traceId: crypto.randomBytes(16),
      spanId: crypto.randomBytes(8),
      name: root ? 'workflow' : 'chat gpt-4o',
      startTimeUnixNano: String(now - 800_000_000n),
      endTimeUnixNano: String(now),
      attributes: root
        ? [text('traceloop.span.kind', 'workflow')]
        : [
            text('gen_ai.operation.name', 'chat'),
            text('gen_ai.provider.name', 'openai'),
            text('gen_ai.request.model', 'gpt-4o'),
            int('gen_ai.usage.input_tokens', 120),
            int('gen_ai.usage.output_tokens', 40),
            text('user.id', `customer-${i % 500}`),
            text(
              'gen_ai.input.messages',
              JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `question number ${i}` }] }]),
            ),
            text(
              'gen_ai.output.messages',
              JSON.stringify([
                {
                  role: 'assistant',
                  parts: [{ type: 'text', content: 'an answer of ordinary length for a benchmark' }],
                },
              ]),
            ),
          ],
    };
  });
  // Ten traces: each block's calls are children of its root.
  for (let i = 0; i < SPANS; i += 1) {
    const root = spans[i - (i % 100)]!;
    spans[i]!.traceId = root.traceId;
    if (root !== spans[i]) Object.assign(spans[i]!, { parentSpanId: root.spanId });
  }
  const body = {
    resourceSpans: [
      { resource: { attributes: [text('service.name', 'bench')] }, scopeSpans: [{ scope: { name: 'bench' }, spans }] },
    ],
  };
  return Buffer.from(request.encode(request.fromObject(body)).finish());
}

/** Two clients sending `bodies` (taken in turn, each once) for `seconds`: items stored per second. */
async function rate(
  url: string,
  headers: Record<string, string>,
  next: () => Buffer | string,
  seconds: number,
  ok: number,
) {
  let items = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      while (performance.now() < end) {
        const res = await fetch(url, { method: 'POST', headers, body: next() });
        await res.arrayBuffer();
        if (res.status === ok) items += SPANS;
      }
    }),
  );
  return items / ((performance.now() - started) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runOtlpBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string' },
      seconds: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const seconds = Number(values.seconds);
  const rows: string[] = [];
  for (const dialect of values.db ? [values.db] : ['sqlite', 'postgres']) {
    const { target, drop, key } = await freshDatabase(dialect);
    const { child, url } = await startGatelog(target);
    try {
      const auth = { authorization: `Bearer ${key.key}` };
      const batch = JSON.stringify({ logs: Array.from({ length: SPANS }, (_, i) => logBody(i)) });
      const batches: number[] = [];
      const exports: number[] = [];
      for (let round = 0; round < Number(values.rounds); round += 1) {
        batches.push(
          await rate(
            `${url}/api/request-logs/batch/`,
            { ...auth, 'content-type': 'application/json' },
            () => batch,
            seconds,
            201,
          ),
        );
        // Made before the clock starts: the exporter's own encoding is not gatelog's time.
        const bodies = Array.from({ length: Math.ceil((batches.at(-1)! * seconds * 2) / SPANS) + 4 }, exportBody);
        let at = 0;
        exports.push(
          await rate(
            `${url}/api/v1/traces`,
            { ...auth, 'content-type': 'application/x-protobuf' },
            () => bodies[at++ % bodies.length]!,
            seconds,
            200,
          ),
        );
        console.log(
          `${dialect} round ${round + 1}: batch ${batches.at(-1)!.toFixed(0)} logs/s, OTLP ${exports.at(-1)!.toFixed(0)} spans/s`,
        );
      }
      const ratios = batches.map((b, i) => exports[i]! / b);
      record('otlp', dialect, 'OTLP spans/s (median)', median(exports), 'spans/s');
      record('otlp', dialect, 'OTLP of batch (median of rounds)', median(ratios), '×');
      rows.push(
        `| ${dialect} | ${median(batches).toFixed(0)} | ${median(exports).toFixed(0)} | ${ratios.map((r) => `${(100 * r).toFixed(0)}%`).join(', ')} | ${(100 * median(ratios)).toFixed(0)}% |`,
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await drop();
    }
  }
  console.log(`
OTLP ingestion against the logging API's batch rate, ${seconds} s per measure, alternating rounds:
| database | batch logs/s (median) | OTLP spans/s (median) | OTLP ÷ batch per round | median |
|---|---|---|---|---|
${rows.join('\n')}`);
}
