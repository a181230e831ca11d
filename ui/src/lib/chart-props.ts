/** What a chart (components/chart.tsx, drawn by uPlot in its own chunk) is given to draw. */
export interface ChartSeries {
  label: string;
  /** One value per bucket; null: no value (drawn as a gap). */
  values: (number | null)[];
  /** The custom property of the theme that colours it ("--chart-1"). */
  color: string;
}

export interface ChartProps {
  /** Each bucket's start, in seconds since the epoch (uPlot's unit). */
  x: number[];
  series: ChartSeries[];
  height: number;
  /** Bars (counts per bucket) rather than lines. */
  bars?: boolean;
  /** Times in UTC rather than in the browser's zone. */
  utc: boolean;
  format?: (value: number) => string;
  /** A drag across the chart: the instants (ms) between which it went. */
  onZoom?: (from: number, to: number) => void;
  /** A click: the bucket under the cursor, and the series nearest to it (its index in `series`), if any. */
  onPick?: (bucket: number, series: number | null) => void;
  testId?: string;
  /** Called when the chart has been drawn, or has given up (its module could not load). */
  onDrawn?: () => void;
}
