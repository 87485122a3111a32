/** A small dependency-free SVG line chart (log-scale x; linear or log y) for benchmark results. */
export interface ChartSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface Chart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly logY: boolean;
  readonly series: readonly ChartSeries[];
}

const WIDTH = 720;
const HEIGHT = 440;
const MARGIN = { left: 70, right: 170, top: 40, bottom: 50 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function lineChart(chart: Chart): string {
  const points = chart.series.flatMap((series) => series.points).filter(([x, y]) => x > 0 && (!chart.logY || y > 0));
  const xs = points.map(([x]) => Math.log10(x));
  const ys = points.map(([, y]) => (chart.logY ? Math.log10(y) : y));
  const [xMin, xMax] = [Math.floor(Math.min(...xs)), Math.ceil(Math.max(...xs))];
  const [yMin, yMax] = chart.logY ? [Math.floor(Math.min(...ys)), Math.ceil(Math.max(...ys))] : [0, Math.max(...ys) * 1.1 || 1];
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const px = (x: number) => MARGIN.left + ((Math.log10(x) - xMin) / (xMax - xMin || 1)) * plotWidth;
  const py = (y: number) => MARGIN.top + plotHeight - (((chart.logY ? Math.log10(y) : y) - yMin) / (yMax - yMin || 1)) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15">${escape(chart.title)}</text>`,
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#333"/>`,
  ];
  for (let exponent = xMin; exponent <= xMax; exponent += 1) {
    const x = px(10 ** exponent);
    parts.push(`<line x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${MARGIN.top + plotHeight}" stroke="#ddd"/>`);
    parts.push(`<text x="${x}" y="${MARGIN.top + plotHeight + 16}" text-anchor="middle">1e${exponent}</text>`);
  }
  const yTicks = chart.logY ? [...Array(yMax - yMin + 1).keys()].map((i) => 10 ** (yMin + i)) : [...Array(6).keys()].map((i) => (yMax * i) / 5);
  for (const tick of yTicks) {
    const y = py(tick);
    parts.push(`<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + plotWidth}" y2="${y}" stroke="#ddd"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${y + 4}" text-anchor="end">${chart.logY ? `1e${Math.round(Math.log10(tick))}` : tick.toPrecision(3)}</text>`);
  }
  parts.push(`<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escape(chart.xLabel)}</text>`);
  parts.push(`<text transform="translate(18 ${MARGIN.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}</text>`);
  chart.series.forEach((series, index) => {
    const color = COLORS[index % COLORS.length];
    const usable = series.points.filter(([x, y]) => x > 0 && (!chart.logY || y > 0));
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${usable.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`);
    for (const [x, y] of usable) parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${color}"/>`);
    const legendY = MARGIN.top + 10 + index * 18;
    parts.push(`<line x1="${WIDTH - MARGIN.right + 12}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 32}" y2="${legendY}" stroke="${color}" stroke-width="2"/>`);
    parts.push(`<text x="${WIDTH - MARGIN.right + 38}" y="${legendY + 4}">${escape(series.name)}</text>`);
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
  const left = 440;
  const right = 40;
  const top = 40;
  const height = top + bars.length * rowHeight + 50;
  const values = bars.flatMap((bar) => [bar.value, bar.target ?? bar.value, 1]).map(Math.log10);
  const [low, high] = [Math.floor(Math.min(...values)), Math.ceil(Math.max(...values))];
  const width = WIDTH + 180;
  const plotWidth = width - left - right;
  const px = (factor: number) => left + ((Math.log10(factor) - low) / (high - low || 1)) * plotWidth;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14">${escape(title)}</text>`,
  ];
  for (let exponent = low; exponent <= high; exponent += 1) {
    const x = px(10 ** exponent);
    parts.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + bars.length * rowHeight}" stroke="${exponent === 0 ? '#333' : '#ddd'}"/>`);
    parts.push(`<text x="${x}" y="${top + bars.length * rowHeight + 16}" text-anchor="middle">${10 ** exponent}×</text>`);
  }
  bars.forEach((bar, index) => {
    const y = top + index * rowHeight;
    const start = px(Math.min(1, bar.value));
    const end = px(Math.max(1, bar.value));
    const met = bar.target === undefined || bar.value <= bar.target;
    parts.push(`<text x="${left - 8}" y="${y + 17}" text-anchor="end">${escape(bar.label)}</text>`);
    parts.push(`<rect x="${start}" y="${y + 5}" width="${Math.max(1, end - start)}" height="${rowHeight - 10}" fill="${met ? '#2ca02c' : '#d62728'}"/>`);
    parts.push(`<text x="${end + 4}" y="${y + 17}">${bar.value.toFixed(2)}×</text>`);
    if (bar.target !== undefined) {
      const x = px(bar.target);
      parts.push(`<line x1="${x}" y1="${y + 2}" x2="${x}" y2="${y + rowHeight - 2}" stroke="#000" stroke-width="3"/>`);
    }
  });
  parts.push(`<text x="${left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">${escape(xLabel)}</text>`, '</svg>');
  return parts.join('\n');
}
