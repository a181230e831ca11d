/**
 * A chart, drawn once its module (components/chart.tsx with uPlot, a chunk of its own) has loaded: the
 * entry chunk does not carry uPlot, and screens without charts never load it. Until then (or if it
 * cannot load) a box of the chart's height holds its place, so nothing moves when it appears.
 */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ChartProps } from '../lib/chart-props';
import '../charts.css';

let loaded: ComponentType<ChartProps> | null = null;
let loading: Promise<ComponentType<ChartProps>> | null = null;

function loadChart(): Promise<ComponentType<ChartProps>> {
  loading ??= import('./chart').then((m) => (loaded = m.default));
  return loading;
}

/** Starts loading the chart module (once), so that it arrives while the numbers are being asked for. */
export function preloadCharts(): void {
  loadChart().catch(() => {
    // Said by the chart that waits for it.
  });
}

export function LazyChart(props: ChartProps) {
  const [Chart, setChart] = useState<ComponentType<ChartProps> | null>(() => loaded);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (Chart) return;
    let live = true;
    loadChart().then(
      (c) => live && setChart(() => c),
      () => {
        // A new build replaced the chunk this page knew: the numbers are still shown beside the chart.
        loading = null;
        if (live) setFailed(true);
        props.onDrawn?.();
      },
    );
    return () => {
      live = false;
    };
  }, []);
  if (Chart) return <Chart {...props} />;
  return (
    <div class={`chart-canvas chart-waiting${props.height <= 100 ? ' short' : ''}`} aria-busy={!failed}>
      {failed ? 'The chart could not be loaded; reload the page.' : ''}
    </div>
  );
}
