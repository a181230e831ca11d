/**
 * `gl_summary_cells`, the SQLite aggregate behind a summary (logs/summary/summary.ts): it reads a range of logs once
 * and files each log's values under its bucket and series as the rows go by, then gives every cell's
 * (bucket × series) and every bucket's metrics — exact percentiles from their own sorted values — and,
 * for the totals, the counts and each percentile field's values in order.
 *
 * Why an aggregate of our own: exact percentiles at three levels (totals, buckets, series per bucket)
 * took three reads of the range in SQL, each with a sort per group (a GROUP BY's temporary B-tree and a
 * sort per percentile_cont), about 0.6 s at a million logs. Filed here, the range is read once and every
 * level's percentiles come from the same sorted values; a call costs about 50 ns a value, well under
 * what a sorter costs. Registered on every SQLite connection (db/sqlite-open.ts); the summary runs it on the
 * reader threads, one time slice of the range each (logs/summary/sqlite-summary.ts).
 *
 * Arguments: the spec (`gl_summary_spec(json)`, below), the log's bucket number, its status code, the
 * value of each group-by field (as many as the spec's groups have), then the value of each metric field
 * (x0, x1 …; null when the log has none). The group values come raw and are matched to a series here: ten
 * `IS` tests per row in a CASE cost SQLite more than handing the value over.
 *
 * Memory: every value of a field with a percentile is held (8 bytes, a few copies while sorting and
 * merging), as SQLite's own percentile_cont holds them; the query budget bounds how long a range is read.
 */
import type SQLite from 'better-sqlite3';

export interface CellsSpec {
  /** Per metric field, the fractions of its percentiles (empty when none). */
  fractions: number[][];
  /** How many group-by values each row hands over. */
  groups: number;
  /**
   * The kept series' group values (each as groupKey gives it), in series order; a log with others is
   * in series −1 ("other"). Null without group_by: every log in series 0.
   */
  series: (string | null)[][] | null;
}

/** A group value as the spec holds it: numbers as text, so that 200 and "200" are one series. */
export const groupKey = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** count, sum, min, max of one field's non-null values (sum, min, max null when count is 0). */
export type FieldStats = [count: number, sum: number | null, min: number | null, max: number | null];

export interface Stats {
  /** Logs. */
  n: number;
  /** Logs with a status code of 400 or more. */
  e: number;
  f: FieldStats[];
  /** Per field, its percentiles in the spec's order (null without values). */
  p: (number | null)[][];
}

export interface CellsResult {
  cells: [bucket: number, series: number, stats: Stats][];
  buckets: [bucket: number, stats: Stats][];
  /** The totals of the slice, without percentiles: those come from `sorted`. */
  total: Omit<Stats, 'p'>;
  /** Per field with percentiles, how many values it holds in the blob's tail (the totals' sorted values). */
  sorted: number[];
}

class Cell {
  n = 0;
  e = 0;
  readonly count: Float64Array;
  readonly sum: Float64Array;
  readonly min: Float64Array;
  readonly max: Float64Array;
  readonly values: (number[] | null)[];

  constructor(spec: CellsSpec) {
    const k = spec.fractions.length;
    this.count = new Float64Array(k);
    this.sum = new Float64Array(k);
    this.min = new Float64Array(k).fill(Infinity);
    this.max = new Float64Array(k).fill(-Infinity);
    this.values = spec.fractions.map((f) => (f.length > 0 ? [] : null));
  }
}

/** Per series, from its group values (a nested map, one level per group-by field) to its index. */
type SeriesMap = Map<string | null, SeriesMap | number>;

interface Parsed extends CellsSpec {
  seriesOf: SeriesMap;
}

interface State {
  spec: Parsed | null;
  /** Bucket number → cells by series + 1 (other first). */
  cells: Map<number, (Cell | undefined)[]>;
  lastBucket: number;
  lastRow: (Cell | undefined)[] | null;
}

/**
 * Specs by id. The spec reaches the aggregate as `gl_summary_spec(?)`, a deterministic function of a
 * bound value that SQLite evaluates once per statement, so that each row hands over an integer rather
 * than the spec's text (made into a JavaScript string each time: a tenth of the aggregate's time).
 */
const specIds = new Map<string, number>();
const specs = new Map<number, Parsed>();
let nextSpecId = 1;

function parseSpec(text: string): Parsed {
  const parsed = JSON.parse(text) as CellsSpec;
  const seriesOf: SeriesMap = new Map();
  parsed.series?.forEach((values, k) => {
    let level = seriesOf;
    values.forEach((v, i) => {
      if (i === values.length - 1) level.set(v, k);
      else {
        let next = level.get(v);
        if (!(next instanceof Map)) level.set(v, (next = new Map()));
        level = next;
      }
    });
  });
  return { ...parsed, seriesOf };
}

function specId(text: string): number {
  let id = specIds.get(text);
  if (id === undefined) {
    // A thread runs one statement at a time: forgetting old specs never drops one in use.
    if (specs.size >= 100) {
      specs.clear();
      specIds.clear();
    }
    id = nextSpecId++;
    specs.set(id, parseSpec(text));
    specIds.set(text, id);
  }
  return id;
}

/** percentile_cont over sorted values, as SQLite computes it (interpolated between the nearest two). */
export function percentileOfSorted(sorted: ArrayLike<number>, fraction: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const ix = fraction * (n - 1);
  const i1 = Math.trunc(ix);
  const i2 = ix === i1 || i1 === n - 1 ? i1 : i1 + 1;
  return sorted[i1] + (sorted[i2] - sorted[i1]) * (ix - i1);
}

const fieldStats = (count: number, sum: number, min: number, max: number): FieldStats =>
  count === 0 ? [0, null, null, null] : [count, sum, min, max];

/** A cell's or a sum of cells' counts, with each percentile field's values sorted. */
interface Summed {
  n: number;
  e: number;
  count: Float64Array;
  sum: Float64Array;
  min: Float64Array;
  max: Float64Array;
  sorted: (Float64Array | null)[];
}

/** A cell with its values sorted (the unsorted ones let go). */
const sortedCell = ({ values, ...counts }: Cell): Summed => ({
  ...counts,
  sorted: values.map((v) => (v ? new Float64Array(v).sort() : null)),
});

/** Two sorted runs as one. */
function mergeTwo(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
  if (i < a.length) out.set(a.subarray(i), k);
  else out.set(b.subarray(j), k);
  return out;
}

/**
 * Sorted runs as one sorted array, merged in pairs (each value copied about log2(runs) times): less
 * than half the time of putting them together and sorting again (45 → 18 ms for a million values).
 */
function mergeSorted(runs: Float64Array[]): Float64Array {
  if (runs.length === 0) return new Float64Array(0);
  let level = runs;
  while (level.length > 1) {
    const next: Float64Array[] = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(i + 1 < level.length ? mergeTwo(level[i], level[i + 1]) : level[i]);
    level = next;
  }
  return level[0];
}

/** Sums of several: counts added, sorted values merged. */
function combined(spec: CellsSpec, parts: Summed[]): Summed {
  const into: Summed = { ...new Cell(spec), sorted: [] };
  for (const c of parts) {
    into.n += c.n;
    into.e += c.e;
    for (let j = 0; j < spec.fractions.length; j += 1) {
      into.count[j] += c.count[j];
      into.sum[j] += c.sum[j];
      if (c.min[j] < into.min[j]) into.min[j] = c.min[j];
      if (c.max[j] > into.max[j]) into.max[j] = c.max[j];
    }
  }
  into.sorted = spec.fractions.map((f, j) => (f.length === 0 ? null : mergeSorted(parts.map((c) => c.sorted[j]!))));
  return into;
}

const statsOf = (spec: CellsSpec, s: Summed): Stats => ({
  n: s.n,
  e: s.e,
  f: spec.fractions.map((_, j) => fieldStats(s.count[j], s.sum[j], s.min[j], s.max[j])),
  p: spec.fractions.map((fractions, j) => fractions.map((f) => percentileOfSorted(s.sorted[j] ?? [], f))),
});

function result(state: State): Buffer {
  const spec = state.spec;
  const out: CellsResult = { cells: [], buckets: [], total: { n: 0, e: 0, f: [] }, sorted: [] };
  if (!spec) return encode(out, []);
  const buckets: Summed[] = [];
  for (const [bucket, row] of state.cells) {
    const cells: Summed[] = [];
    row.forEach((cell, at) => {
      if (!cell) return;
      const summed = sortedCell(cell);
      out.cells.push([bucket, at - 1, statsOf(spec, summed)]);
      cells.push(summed);
    });
    // The bucket's unsorted values are not needed any more.
    state.cells.delete(bucket);
    const whole = cells.length === 1 ? cells[0] : combined(spec, cells);
    out.buckets.push([bucket, statsOf(spec, whole)]);
    buckets.push(whole);
  }
  const all = combined(spec, buckets);
  const { p: _p, ...total } = statsOf(spec, all);
  out.total = total;
  const tails = all.sorted.filter((s): s is Float64Array => s !== null);
  out.sorted = tails.map((s) => s.length);
  return encode(out, tails);
}

/** The result as one blob: a 4-byte length, the JSON, padding to 8 bytes, then the sorted values. */
function encode(out: CellsResult, tails: Float64Array[]): Buffer {
  const json = Buffer.from(JSON.stringify(out));
  const head = Math.ceil((4 + json.length) / 8) * 8;
  const blob = Buffer.alloc(head + tails.reduce((n, t) => n + t.byteLength, 0));
  blob.writeUInt32LE(json.length, 0);
  json.copy(blob, 4);
  let at = head;
  for (const t of tails) {
    Buffer.from(t.buffer, t.byteOffset, t.byteLength).copy(blob, at);
    at += t.byteLength;
  }
  return blob;
}

/** The blob `gl_summary_cells` answers, read back (a Buffer, or a Uint8Array once it crossed threads). */
export function decodeCells(blob: Uint8Array): { result: CellsResult; sorted: Float64Array[] } {
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  const length = bytes.readUInt32LE(0);
  const result = JSON.parse(bytes.toString('utf8', 4, 4 + length)) as CellsResult;
  // Copied out: the blob's offset need not be a multiple of 8.
  let at = Math.ceil((4 + length) / 8) * 8;
  const sorted = result.sorted.map((n) => {
    const values = new Float64Array(n);
    new Uint8Array(values.buffer).set(bytes.subarray(at, at + n * 8));
    at += n * 8;
    return values;
  });
  return { result, sorted };
}

export function registerCellsAggregate(sqlite: SQLite.Database): void {
  sqlite.function('gl_summary_spec', { deterministic: true }, (text: unknown) => specId(String(text)));
  sqlite.aggregate('gl_summary_cells', {
    varargs: true,
    start: (): State => ({ spec: null, cells: new Map(), lastBucket: NaN, lastRow: null }),
    step: (state: State, id: number, bucket: number, status: number, ...args: unknown[]) => {
      const spec = (state.spec ??= specs.get(id)!);
      // Rows come in time order: a bucket's rows one after another.
      let row = state.lastBucket === bucket ? state.lastRow : state.cells.get(bucket);
      if (!row) state.cells.set(bucket, (row = []));
      state.lastBucket = bucket;
      state.lastRow = row;
      let series = 0;
      if (spec.series) {
        let level: SeriesMap | number | undefined = spec.seriesOf;
        for (let i = 0; i < spec.groups && level instanceof Map; i += 1) level = level.get(groupKey(args[i]));
        series = typeof level === 'number' ? level : -1;
      }
      let cell = row[series + 1];
      if (!cell) row[series + 1] = cell = new Cell(spec);
      cell.n += 1;
      if (status >= 400) cell.e += 1;
      for (let j = 0; j + spec.groups < args.length; j += 1) {
        const x = args[j + spec.groups];
        if (x === null || x === undefined) continue;
        const v = Number(x);
        cell.count[j] += 1;
        cell.sum[j] += v;
        if (v < cell.min[j]) cell.min[j] = v;
        if (v > cell.max[j]) cell.max[j] = v;
        cell.values[j]?.push(v);
      }
    },
    result: (state: State) => result(state),
  } as SQLite.AggregateOptions);
}
