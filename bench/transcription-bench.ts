/**
 * Speech-to-text proxy overhead. The fake upstream (its own process; it reads an upload to the end and
 * answers a fixed text) and `gatelog serve` (SQLite, logging on) run as in the proxy bench. For a 1 MB and
 * a 20 MB WAV file, uploads straight to the fake and through gatelog take turns, one at a time; the
 * added latency is through − direct (medians). gatelog passes the file on while it arrives: the budget
 * is 5 ms plus the time to stream the bytes once more over loopback, which the direct upload measures.
 * Then 8 uploads of 20 MB at once through gatelog, sampling gatelog's resident memory every 5 ms: its
 * peak growth must stay under 2 × 8 × 20 MB (each file held once, not twice).
 *
 *   npm run bench -- transcription [--rounds 20] [--gap 100]
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { percentile } from './bench-store.js';
import { startProxyStack } from './proxy-bench.js';
import { record } from './summary.js';

const MB = 1024 * 1024;

/** A WAV file of `bytes` bytes: a real 16 kHz mono 16-bit header, then samples. */
function wavFile(bytes: number): Buffer {
  const file = Buffer.alloc(bytes, 0);
  const data = bytes - 44;
  file.write('RIFF', 0, 'latin1');
  file.writeUInt32LE(bytes - 8, 4);
  file.write('WAVEfmt ', 8, 'latin1');
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20); // PCM
  file.writeUInt16LE(1, 22); // mono
  file.writeUInt32LE(16000, 24);
  file.writeUInt32LE(32000, 28);
  file.writeUInt16LE(2, 32);
  file.writeUInt16LE(16, 34);
  file.write('data', 36, 'latin1');
  file.writeUInt32LE(data, 40);
  for (let i = 44; i + 1 < bytes; i += 2) file.writeInt16LE(Math.round(Math.sin(i / 20) * 8000), i);
  return file;
}

/** A multipart body as the OpenAI client sends it (file first). */
function form(file: Buffer): { body: Buffer; type: string } {
  const boundary = 'bench-boundary-7d2f';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="speech.wav"\r\n` +
        'Content-Type: audio/wav\r\n\r\n',
    ),
    file,
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}--\r\n`,
    ),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function upload(url: string, key: string, payload: { body: Buffer; type: string }): Promise<number> {
  const started = performance.now();
  const res = await request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': payload.type },
    body: payload.body,
  });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
  return performance.now() - started;
}

/** Resident memory of a process, in bytes (/proc/PID/status). */
function rss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  return kb ? Number(kb[1]) * 1024 : 0;
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const p90 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    90,
  );

export async function runTranscriptionBench(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { rounds: { type: 'string', default: '20' }, gap: { type: 'string', default: '100' } },
  });
  const rounds = Number(values.rounds);
  // A pause before each upload: latency one call at a time, not load. The call before has written its
  // log by then (within 50 ms), as it would have between two calls of a client waiting for its answer.
  const pause = () => new Promise((resolve) => setTimeout(resolve, Number(values.gap)));
  const stack = await startProxyStack();
  const direct = `${stack.fakeUrl}/audio/transcriptions`;
  const through = `${stack.gatelogUrl}/api/audio/transcriptions`;
  const rows: string[] = [];
  try {
    for (const size of [1, 20]) {
      const payload = form(wavFile(size * MB));
      // Warm-up: JIT, connection pools, the first page faults of the buffers.
      for (let i = 0; i < 3; i++) {
        await upload(direct, 'sk-bench', payload);
        await upload(through, stack.key, payload);
      }
      const times = { direct: [] as number[], through: [] as number[] };
      for (let i = 0; i < rounds; i++) {
        // Taking turns, so that the machine's noisy stretches fall on both alike.
        if (i % 2) times.through.push(await pause().then(() => upload(through, stack.key, payload)));
        times.direct.push(await pause().then(() => upload(direct, 'sk-bench', payload)));
        if (!(i % 2)) times.through.push(await pause().then(() => upload(through, stack.key, payload)));
      }
      const added = median(times.through) - median(times.direct);
      record('transcription', '-', `added latency, ${size} MB (median)`, added, 'ms');
      const budget = 5 + median(times.direct);
      rows.push(
        `| ${size} MB | ${median(times.direct).toFixed(1)} / ${p90(times.direct).toFixed(1)} | ` +
          `${median(times.through).toFixed(1)} / ${p90(times.through).toFixed(1)} | ${added.toFixed(1)} | ` +
          `${budget.toFixed(1)} | ${added <= budget ? 'met' : 'MISSED'} |`,
      );
      console.log(rows.at(-1));
    }

    const payload = form(wavFile(20 * MB));
    const base = rss(stack.gatelogPid);
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(stack.gatelogPid))), 5);
    const started = performance.now();
    await Promise.all(Array.from({ length: 8 }, () => upload(through, stack.key, payload)));
    const wall = performance.now() - started;
    clearInterval(sampler);
    const grown = (peak - base) / MB;
    record('transcription', '-', 'memory growth, 8 × 20 MB at once', grown, 'MB');
    const memory =
      `8 concurrent 20 MB uploads through gatelog: ${wall.toFixed(0)} ms; RSS ${(base / MB).toFixed(0)} MB → peak ` +
      `${(peak / MB).toFixed(0)} MB, growth ${grown.toFixed(0)} MB (bound 2 × 8 × 20 = 320 MB: ${grown <= 320 ? 'met' : 'MISSED'})`;
    console.log(`
Speech-to-text proxy, ${rounds} uploads each way per size, one at a time, ${values.gap} ms apart (ms, median / p90):
| file | direct | through gatelog | added | budget (5 + direct) | |
| ---: | ---: | ---: | ---: | ---: | --- |
${rows.join('\n')}

${memory}`);
  } finally {
    const logs = await stack.stop();
    console.log(`logs stored: ${logs}`);
  }
}
