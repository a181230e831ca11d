/**
 * One time-series chart drawn by uPlot. This module (and uPlot with it) is its own chunk, loaded by
 * chart-loader.tsx when a chart is first shown, so that the entry chunk stays small. uPlot sets its
 * elements' styles through the DOM (CSSOM), which the strict Content-Security-Policy allows; its
 * stylesheet is a file of the chunk. Colours are the theme's custom properties, read again when the
 * theme changes; the width follows the box (a phone's too).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartProps } from '../lib/chart-props';
import { tickLabel, timeSteps } from '../lib/time-axis';

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** The theme in use, as a number that changes when it does (the chart is drawn again in its colours). */
function useThemeTick(): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const observer = new MutationObserver(() => setTick((t) => t + 1));
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => observer.disconnect();
  }, []);
  return tick;
}

export default function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  // The time axis's labels in words, for a screen reader (the canvas has none).
  const axisText = useRef<HTMLParagraphElement>(null);
  const plot = useRef<uPlot | null>(null);
  // The latest handlers, read by the chart's own listeners (made once per drawing).
  const handlers = useRef(props);
  handlers.current = props;
  const theme = useThemeTick();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fg = css('--muted');
    const grid = css('--line');
    let focused: number | null = null;
    let dragged = false;
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const bars = uPlot.paths.bars?.({ size: [0.8, 48] });
    const tzDate = props.utc
      ? (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC')
      : (ts: number) => new Date(ts * 1000);
    const options: uPlot.Options = {
      width: Math.max(120, el.clientWidth),
      height: props.height,
      legend: { show: false },
      tzDate,
      cursor: {
        drag: { x: props.onZoom !== undefined, y: false, setScale: false },
        focus: { prox: 24 },
        points: { show: !props.bars },
      },
      focus: { alpha: 0.4 },
      scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
      axes: [
        {
          ...axis,
          size: 32,
          // The window's length decides the steps (whole days over a few days) and how ticks read.
          incrs: (_u, _axis, min, max) => timeSteps(max - min),
          values: (_u, splits, _axis, _space, step) => {
            const labels = splits.map((t) => tickLabel(tzDate(t), step));
            const text = `Time axis: ${labels.join(', ')}`;
            if (axisText.current && axisText.current.textContent !== text) axisText.current.textContent = text;
            return labels;
          },
        },
        {
          ...axis,
          // As wide as its longest label ("1.50 s", "$0.0012"), so that none is cut.
          size: (_u, values) => 14 + 7 * Math.max(2, ...(values ?? []).map((v) => v.length)),
          values: (_u, splits) => splits.map((v) => (props.format ? props.format(v) : String(v))),
        },
      ],
      series: [
        {},
        ...props.series.map((s) => ({
          label: s.label,
          stroke: css(s.color),
          fill: props.bars ? css(s.color) : undefined,
          width: props.bars ? 0 : 2,
          paths: props.bars ? bars : undefined,
          points: { show: false },
          spanGaps: false,
        })),
      ],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 3) return;
            const from = u.posToVal(u.select.left, 'x') * 1000;
            const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
            dragged = true;
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            handlers.current.onZoom?.(from, to);
          },
        ],
        setSeries: [
          (_u, i, opts) => {
            if ((opts as { focus?: boolean }).focus !== undefined || i === null) focused = i === null ? null : i - 1;
          },
        ],
      },
    };
    const u = new uPlot(options, [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData, el);
    plot.current = u;
    handlers.current.onDrawn?.();
    const click = () => {
      if (dragged) {
        dragged = false;
        return;
      }
      const idx = u.cursor.idx;
      if (idx !== null && idx !== undefined) handlers.current.onPick?.(idx, focused);
    };
    u.over.addEventListener('click', click);
    if (props.onPick) u.over.classList.add('pickable');
    const resize = new ResizeObserver(() => {
      const width = Math.max(120, el.clientWidth);
      if (width !== u.width) u.setSize({ width, height: props.height });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.over.removeEventListener('click', click);
      u.destroy();
      plot.current = null;
    };
  }, [theme, props.utc, props.height, props.bars, props.series.map((s) => `${s.label}/${s.color}`).join('|')]);

  // New numbers for the same series: set in place, no new chart.
  useEffect(() => {
    plot.current?.setData([props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData);
  }, [props.x, props.series]);

  return (
    <div class="chart-canvas" data-testid={props.testId}>
      <div ref={box} />
      <p ref={axisText} class="visually-hidden" />
    </div>
  );
}
