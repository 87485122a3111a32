/**
 * Small dependency-free SVG charts for benchmark results: lines of times or bandwidths against
 * message sizes (or member counts), and bars of factors. Axes end at the data (rounded to a nice
 * value), ticks are written in the data's units (B/KiB/MiB, µs/ms/s, MB/s/GB/s), a 0 B point sits
 * at its own labelled place left of the smallest size, and legends sit outside the plot, sized
 * from their text, so that nothing is dropped or cut.
 */
import { formatBandwidth, formatBytes, formatMicroseconds } from './units.js';

/**
 * How a series is drawn: measured points joined by a line; a wide pale line; a dashed line.
 * Wide lines are drawn first and dashed ones last, so two models that coincide both stay visible.
 */
export type SeriesStyle = 'points' | 'wide' | 'dashed';

export interface ChartSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
  /** 'points' unless given. */
  readonly style?: SeriesStyle;
}

/** Message sizes in bytes (log scale, 0 B left of the smallest size) or member counts (linear). */
export type XAxisKind = 'bytes' | 'members';
/** Times in µs (log scale), bandwidths in MB/s, that is bytes per µs, or factors such as speedups (both linear from 0). */
export type YAxisKind = 'time' | 'bandwidth' | 'factor';

export interface Chart {
  readonly title: string;
  readonly x: XAxisKind;
  readonly xLabel: string;
  readonly y: YAxisKind;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
}

/** Width of the plot area and of what surrounds it, px. */
const PLOT = { width: 560, height: 320 };
const MARGIN = { left: 84, right: 30, top: 44, bottom: 56 };
const LEGEND_ROW = 18;
/** Upper bounds of a glyph's average advance at 12 px and 15 px in the usual sans-serif fonts, so estimated text widths never fall short. */
const CHAR_WIDTH = 7.5;
const TITLE_CHAR_WIDTH = 9.5;
/** Blank space at each end of an axis, as a share of its range, so that no point sits on the frame. */
const AXIS_PADDING = 0.03;
/** Ticks on the size axis at most; more would overlap ("256 KiB" is wide). */
const MAX_SIZE_TICKS = 8;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

export const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const textWidth = (text: string, charWidth = CHAR_WIDTH) => [...text].length * charWidth;
const px = (value: number) => value.toFixed(1);

interface Tick {
  readonly value: number;
  readonly label: string;
}

/** An axis in transformed units (log2 bytes, log10 µs, ...): where a value sits, from 0 at the low end to 1 at the high end. */
interface Axis {
  readonly place: (value: number) => number;
  readonly ticks: readonly Tick[];
  /** Where the axis is broken between 0 B and the smallest size, if it shows 0 B. */
  readonly breakAt?: number;
}

function axisOver(transform: (value: number) => number, start: number, end: number, ticks: readonly Tick[], breakAt?: number): Axis {
  const span = end - start || 1;
  const place = (value: number) => (transform(value) - start + AXIS_PADDING * span) / ((1 + 2 * AXIS_PADDING) * span);
  return { place, ticks, ...(breakAt === undefined ? {} : { breakAt: place(breakAt) }) };
}

/**
 * Sizes on a log2 scale from the smallest to the largest, ticks at powers of two from the
 * smallest on (so that sizes spaced by powers of 4 or 8 fall on ticks); 0 B one tick step
 * further left, past a break.
 */
function bytesAxis(values: readonly number[]): Axis {
  const exponents = values.filter((bytes) => bytes > 0).map(Math.log2);
  const low = exponents.length > 0 ? Math.floor(Math.min(...exponents)) : 0;
  const high = Math.max(exponents.length > 0 ? Math.ceil(Math.max(...exponents)) : 0, low + 1);
  const steps = [1, 2, 3, 4, 6, 8, 12, 16].filter((candidate) => Math.floor((high - low) / candidate) + 1 <= MAX_SIZE_TICKS);
  // Rather a step that puts a tick at the largest size too.
  const step = steps.find((candidate) => (high - low) % candidate === 0) ?? steps[0] ?? 32;
  const ticks: Tick[] = [];
  for (let exponent = low; exponent <= high; exponent += step) ticks.push({ value: 2 ** exponent, label: formatBytes(2 ** exponent) });
  if (!values.includes(0)) return axisOver(Math.log2, low, high, ticks);
  const zero = low - step;
  return axisOver((bytes) => (bytes > 0 ? Math.log2(bytes) : zero), zero, high, [{ value: 0, label: formatBytes(0) }, ...ticks], 2 ** (low - step / 2));
}

/** Member counts on a linear scale, a tick per count measured (or per few counts when there are many). */
function membersAxis(values: readonly number[]): Axis {
  const [low, high] = [Math.min(...values), Math.max(...values)];
  const measured = [...new Set(values)].sort((a, b) => a - b);
  const step = Math.max(1, Math.ceil((high - low) / 10));
  const counts = measured.length <= 10 ? measured : Array.from({ length: Math.floor((high - low) / step) + 1 }, (_, index) => low + index * step);
  // A single count sits in the middle.
  const [start, end] = low === high ? [low - 1, high + 1] : [low, high];
  return axisOver((count) => count, start, end, counts.map((count) => ({ value: count, label: String(count) })));
}

const NICE_MULTIPLIERS = [1, 2, 5];

/** The largest (or smallest) 1, 2 or 5 × 10^k not above (below) `value`. */
function nice(value: number, direction: 'down' | 'up'): number {
  const decade = 10 ** Math.floor(Math.log10(value));
  const candidates = [...NICE_MULTIPLIERS, 10].map((multiplier) => multiplier * decade);
  return direction === 'down' ? (candidates.filter((candidate) => candidate <= value * (1 + 1e-9)).pop() as number) : (candidates.find((candidate) => candidate >= value * (1 - 1e-9)) as number);
}

/** Positive values on a log10 scale between nice limits; ticks at 1, 2 and 5 × 10^k over a short range, at powers of ten over a long one. */
function logAxis(values: readonly number[], format: (value: number) => string): Axis {
  const positive = values.filter((value) => value > 0 && Number.isFinite(value));
  let [low, high] = positive.length > 0 ? [nice(Math.min(...positive), 'down'), nice(Math.max(...positive), 'up')] : [1, 10];
  if (low === high) [low, high] = [nice(low / 1.5, 'down'), nice(high * 1.5, 'up')];
  const decades = Math.log10(high / low);
  const multipliers = decades > 2 ? [1] : NICE_MULTIPLIERS;
  const ticks: Tick[] = [];
  for (let exponent = Math.floor(Math.log10(low)); exponent <= Math.ceil(Math.log10(high)); exponent += 1) {
    for (const multiplier of multipliers) {
      const value = Number((multiplier * 10 ** exponent).toPrecision(6));
      if (value >= low * (1 - 1e-9) && value <= high * (1 + 1e-9)) ticks.push({ value, label: format(value) });
    }
  }
  return axisOver(Math.log10, Math.log10(low), Math.log10(high), ticks);
}

/** Values on a linear scale from 0 to a nice limit, about five ticks, written by `format` (given the limit). */
function linearAxis(values: readonly number[], format: (value: number, high: number) => string): Axis {
  const largest = Math.max(0, ...values.filter(Number.isFinite));
  const step = largest > 0 ? nice(largest / 5, 'up') : 1;
  const high = Math.max(step, Math.ceil(largest / step - 1e-9) * step);
  const ticks: Tick[] = [];
  for (let index = 0; index * step <= high * (1 + 1e-9); index += 1) ticks.push({ value: Number((index * step).toPrecision(6)), label: format(index * step, high) });
  return axisOver((value) => value, 0, high, ticks);
}

/** Bandwidths all in MB/s or all in GB/s. */
const bandwidthTick = (value: number, high: number) => formatBandwidth(value, high >= 2000 ? 'GB/s' : 'MB/s');
/** Factors: "0", "4×", "2.5×". */
const factorTick = (value: number) => (value === 0 ? '0' : `${Number(value.toPrecision(3))}×`);

const drawOrder: Record<SeriesStyle, number> = { wide: 0, points: 1, dashed: 2 };

function stroke(style: SeriesStyle, color: string): string {
  if (style === 'wide') return `stroke="${color}" stroke-width="7" stroke-opacity="0.35" stroke-linecap="round"`;
  if (style === 'dashed') return `stroke="${color}" stroke-width="2.5" stroke-dasharray="7 4"`;
  return `stroke="${color}" stroke-width="1.5"`;
}

/** A line chart: x a size or a member count, y a time (log) or a bandwidth (linear); the legend below the plot. */
export function lineChart(chart: Chart): string {
  const drawable = (y: number) => Number.isFinite(y) && (chart.y !== 'time' || y > 0);
  const series = chart.series.map((line, index) => ({ ...line, style: line.style ?? 'points', color: COLORS[index % COLORS.length], points: line.points.filter(([x, y]) => x >= 0 && drawable(y)) }));
  const points = series.flatMap((line) => line.points);
  const xAxis = chart.x === 'bytes' ? bytesAxis(points.map(([x]) => x)) : membersAxis(points.map(([x]) => x));
  const ys = points.map(([, y]) => y);
  const yAxis = chart.y === 'time' ? logAxis(ys, formatMicroseconds) : linearAxis(ys, chart.y === 'bandwidth' ? bandwidthTick : factorTick);
  const legendWidth = Math.max(...series.map((line) => 36 + textWidth(line.name)));
  const width = Math.ceil(Math.max(MARGIN.left + PLOT.width + MARGIN.right, MARGIN.left + legendWidth + MARGIN.right, textWidth(chart.title, TITLE_CHAR_WIDTH) + 40));
  const plotBottom = MARGIN.top + PLOT.height;
  const legendTop = plotBottom + MARGIN.bottom + 4;
  const height = legendTop + series.length * LEGEND_ROW + 8;
  const toX = (x: number) => MARGIN.left + xAxis.place(x) * PLOT.width;
  const toY = (y: number) => plotBottom - yAxis.place(y) * PLOT.height;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text class="title" x="${width / 2}" y="24" text-anchor="middle" font-size="15">${escape(chart.title)}</text>`,
  ];
  for (const tick of xAxis.ticks) {
    const x = px(toX(tick.value));
    parts.push(`<line x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${plotBottom}" stroke="#e4e4e4"/>`);
    parts.push(`<text class="x-tick" x="${x}" y="${plotBottom + 17}" text-anchor="middle">${escape(tick.label)}</text>`);
  }
  for (const tick of yAxis.ticks) {
    const y = px(toY(tick.value));
    parts.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + PLOT.width}" y2="${y}" stroke="#e4e4e4"/>`);
    parts.push(`<text class="y-tick" x="${MARGIN.left - 7}" y="${y}" dy="4" text-anchor="end">${escape(tick.label)}</text>`);
  }
  parts.push(`<rect class="plot" x="${MARGIN.left}" y="${MARGIN.top}" width="${PLOT.width}" height="${PLOT.height}" fill="none" stroke="#333"/>`);
  if (xAxis.breakAt !== undefined) {
    // Two slashes on the axis: the distance from 0 B to the smallest size is not to scale.
    const x = MARGIN.left + xAxis.breakAt * PLOT.width;
    parts.push(`<rect x="${px(x - 4)}" y="${plotBottom - 6}" width="8" height="12" fill="white"/>`);
    for (const offset of [-3, 3]) parts.push(`<line x1="${px(x + offset - 3)}" y1="${plotBottom + 6}" x2="${px(x + offset + 3)}" y2="${plotBottom - 6}" stroke="#333"/>`);
  }
  parts.push(`<text class="x-label" x="${MARGIN.left + PLOT.width / 2}" y="${plotBottom + 40}" text-anchor="middle">${escape(chart.xLabel)}</text>`);
  parts.push(`<text class="y-label" transform="translate(16 ${MARGIN.top + PLOT.height / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}</text>`);
  for (const line of [...series].sort((a, b) => drawOrder[a.style] - drawOrder[b.style])) {
    const coordinates = line.points.map(([x, y]) => `${px(toX(x))},${px(toY(y))}`);
    parts.push(`<polyline fill="none" ${stroke(line.style, line.color)} points="${coordinates.join(' ')}"/>`);
    if (line.style === 'points') for (const [x, y] of line.points) parts.push(`<circle class="point" cx="${px(toX(x))}" cy="${px(toY(y))}" r="3" fill="${line.color}"/>`);
  }
  series.forEach((line, index) => {
    const y = legendTop + index * LEGEND_ROW + LEGEND_ROW / 2;
    parts.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + 28}" y2="${y}" ${stroke(line.style, line.color)}/>`);
    if (line.style === 'points') parts.push(`<circle cx="${MARGIN.left + 14}" cy="${y}" r="3" fill="${line.color}"/>`);
    parts.push(`<text class="legend" x="${MARGIN.left + 36}" y="${y}" dy="4">${escape(line.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

export interface Bar {
  readonly label: string;
  /** A factor (> 0), drawn on a log scale. */
  readonly value: number;
  /** Where the bar should end, drawn as a mark. */
  readonly target?: number;
}

/** Horizontal bars of factors on a log scale, with a line at 1 and each bar's target marked. */
export function barChart(title: string, xLabel: string, bars: readonly Bar[]): string {
  const rowHeight = 26;
  const top = 44;
  const left = Math.ceil(20 + Math.max(0, ...bars.map((bar) => textWidth(bar.label))));
  const plotWidth = 460;
  const factor = (value: number) => `${Number(value.toPrecision(3))}×`;
  const axis = logAxis([1, ...bars.flatMap((bar) => [bar.value, bar.target ?? bar.value])], factor);
  const valueRoom = textWidth('0000.00×') + 16;
  const width = Math.ceil(Math.max(left + plotWidth + valueRoom, textWidth(title, TITLE_CHAR_WIDTH) + 40));
  const bottom = top + bars.length * rowHeight;
  const height = bottom + 50;
  const toX = (value: number) => left + axis.place(value) * plotWidth;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text class="title" x="${width / 2}" y="24" text-anchor="middle" font-size="15">${escape(title)}</text>`,
  ];
  for (const tick of axis.ticks) {
    const x = px(toX(tick.value));
    parts.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${bottom}" stroke="${tick.value === 1 ? '#333' : '#e4e4e4'}"/>`);
    parts.push(`<text class="x-tick" x="${x}" y="${bottom + 16}" text-anchor="middle">${escape(tick.label)}</text>`);
  }
  bars.forEach((bar, index) => {
    const y = top + index * rowHeight;
    const start = toX(Math.min(1, bar.value));
    const end = toX(Math.max(1, bar.value));
    const met = bar.target === undefined || bar.value <= bar.target;
    parts.push(`<text class="label" x="${left - 8}" y="${y + 17}" text-anchor="end">${escape(bar.label)}</text>`);
    parts.push(`<rect x="${px(start)}" y="${y + 5}" width="${px(Math.max(1, end - start))}" height="${rowHeight - 10}" fill="${met ? '#2ca02c' : '#d62728'}"/>`);
    // Right of the bar and of its target mark, which a bar below 1× would otherwise run into.
    const textX = Math.max(end, bar.target === undefined ? end : toX(bar.target) + 2) + 4;
    parts.push(`<text class="value" x="${px(textX)}" y="${y + 17}">${bar.value.toFixed(2)}×</text>`);
    if (bar.target !== undefined) {
      const x = px(toX(bar.target));
      parts.push(`<line x1="${x}" y1="${y + 2}" x2="${x}" y2="${y + rowHeight - 2}" stroke="#000" stroke-width="3"/>`);
    }
  });
  parts.push(`<text class="x-label" x="${left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">${escape(xLabel)}</text>`, '</svg>');
  return `${parts.join('\n')}\n`;
}
