/**
 * `npm run bench -- <name> [options]`: runs one benchmark. `npm run bench` alone runs the whole suite —
 * on SQLite, and on PostgreSQL too when GATELOG_BENCH_PG_URL names a server — and writes its summary
 * table into bench/README.md (summary.ts).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAdmissionBench } from './admission-bench.js';
import { runCacheBench } from './cache-bench.js';
import { runChatStreamBench } from './chat-stream-bench.js';
import { runClaudeStreamBench } from './claude-stream-bench.js';
import { runDatasetBench } from './dataset-bench.js';
import { runIngestBench } from './ingest-bench.js';
import { runListBench } from './list-bench.js';
import { runProxyBench } from './proxy-bench.js';
import { runProxyCpuBench } from './proxy-cpu.js';
import { runProxyFloorBench } from './proxy-floor.js';
import { runSoakBench } from './soak-bench.js';
import { runTailCpuBench } from './tail-cpu.js';
import { summaryMarkdown, writeSummary } from './summary.js';
import { runTranscriptionBench } from './transcription-bench.js';
import { runOtlpBench } from './otlp-bench.js';
import { runOverheadBench } from './overhead-bench.js';
import { runRetentionBench } from './retention-bench.js';
import { runRollupReadBench } from './rollup-read-bench.js';
import { runScaleBench } from './scale-bench.js';
import { runReplicaBench } from './replica-bench.js';
import { runPartitionUpgradeBench } from './partition-upgrade.js';
import { runUiBench } from './ui-bench.js';

const benches: Record<string, (argv: string[]) => Promise<void>> = {
  list: runListBench,
  proxy: runProxyBench,
  'proxy-floor': runProxyFloorBench,
  'proxy-cpu': runProxyCpuBench,
  overhead: runOverheadBench,
  admission: runAdmissionBench,
  ingest: runIngestBench,
  datasets: runDatasetBench,
  transcription: runTranscriptionBench,
  soak: runSoakBench,
  'chat-stream': runChatStreamBench,
  cache: runCacheBench,
  'claude-stream': runClaudeStreamBench,
  ui: runUiBench,
  'tail-cpu': runTailCpuBench,
  otlp: runOtlpBench,
  retention: runRetentionBench,
  'rollup-read': runRollupReadBench,
  'partition-upgrade': runPartitionUpgradeBench,
  scale: runScaleBench,
  replica: runReplicaBench,
};

const [name, ...rest] = process.argv.slice(2);
if (name !== undefined) {
  if (!benches[name]) {
    console.error(`unknown benchmark '${name}'; available: ${Object.keys(benches).join(', ')}`);
    process.exit(1);
  }
  await benches[name](rest);
} else {
  // The whole suite. proxy-cpu needs another build to compare with; the soak, chat-stream and
  // claude-stream run for minutes: all four are run by name.
  const databases = process.env.GATELOG_BENCH_PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  const suite: [string, string[]][] = [
    ['proxy-floor', []],
    ['proxy', []],
    ['transcription', []],
    ...databases.map((db): [string, string[]] => ['ingest', ['--db', db]]),
    ...databases.flatMap((db): [string, string[]][] => [
      ['list', ['--db', db]],
      ['datasets', ['--db', db]],
    ]),
  ];
  const started = new Date();
  const commands: string[] = [];
  for (const [bench, args] of suite) {
    console.log(`\n=== npm run bench -- ${[bench, ...args].join(' ')} ===`);
    commands.push(`npm run bench -- ${[bench, ...args].join(' ')}`);
    await benches[bench](args);
  }
  const markdown = summaryMarkdown(commands, started);
  console.log(`\n${markdown}`);
  await writeSummary(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/README.md'), markdown);
}
