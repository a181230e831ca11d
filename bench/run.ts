/** `npm run bench -- <name> [options]`: runs one benchmark, or every one when no name is given. */
import { runDatasetBench } from './dataset-bench.js';
import { runIngestBench } from './ingest-bench.js';
import { runListBench } from './list-bench.js';
import { runProxyBench } from './proxy-bench.js';
import { runProxyCpuBench } from './proxy-cpu.js';
import { runProxyFloorBench } from './proxy-floor.js';
import { runSoakBench } from './soak-bench.js';
import { runTranscriptionBench } from './transcription-bench.js';

const benches: Record<string, (argv: string[]) => Promise<void>> = {
  list: runListBench,
  proxy: runProxyBench,
  'proxy-floor': runProxyFloorBench,
  'proxy-cpu': runProxyCpuBench,
  ingest: runIngestBench,
  datasets: runDatasetBench,
  transcription: runTranscriptionBench,
  soak: runSoakBench,
};

const [name, ...rest] = process.argv.slice(2);
if (name !== undefined && !benches[name]) {
  console.error(`unknown benchmark '${name}'; available: ${Object.keys(benches).join(', ')}`);
  process.exit(1);
}
for (const [benchName, run] of Object.entries(benches)) {
  if (name === undefined || name === benchName) await run(rest);
}
