/**
 * Draws a trace file (CCJS_TRACE_FILE, Chrome's trace event format) as an SVG timeline: one lane
 * per track, a box per complete event, coloured by operation and labelled where it fits; for
 * looking at a job where no browser is at hand (Perfetto and chrome://tracing open the file itself).
 *   node dist/bench/trace-svg.js trace.json timeline.svg [--zoom from,to] [--title text]
 * --zoom adds a panel of that window (ms from the first event) below the whole job. trace.json may
 * also be one endpoint's part (trace.json.2), or the name of a trace an aborted job did not join:
 * its parts are drawn.
 */
import fs from 'node:fs';
import path from 'node:path';
import { escape } from './svg.js';
import { eventsOfPart } from '../src/runtime/trace-file.js';
import type { TraceEvent as TraceFileEvent } from '../src/runtime/trace-file.js';
import { isEntryPoint } from './ccjbench.js';

type TraceEvent = TraceFileEvent<{ readonly name?: string; readonly sort_index?: number } | undefined>;

interface Track {
  readonly pid: number;
  readonly tid: number;
  name: string;
  readonly events: TraceEvent[];
}

/** A span of the timeline, in ms from the first event. */
interface Window {
  readonly from: number;
  readonly to: number;
}

const WIDTH = 1200;
const LABEL_WIDTH = 190;
const RIGHT = 20;
const TITLE = 40;
const SUBTITLE = 22;
const LANE = 34;
const BOX = 24;
const AXIS = 44;
const LEGEND_ROW = 20;
/** Width of a character of the 11 px labels, roughly, to decide whether a label fits its box. */
const CHAR_WIDTH = 6.2;
const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const PLOT_WIDTH = WIDTH - LABEL_WIDTH - RIGHT;

/** The operation an event shows: "broadcast" of "broadcast (binomial)", "receive" of "receive from 2". */
const operationOf = (event: TraceEvent) => event.name.split(' ')[0] as string;

/** The whole job, and below it `zoom` (marked on the whole) when given. */
export function timelineSvg(events: readonly TraceEvent[], title: string, zoom?: Window): string {
  const tracks = tracksOf(events);
  const complete = tracks.flatMap((track) => track.events);
  if (complete.length === 0) throw new Error('the trace holds no complete ("X") events to draw');
  // Folds rather than Math.min(...events): a long job has more events than a call takes arguments.
  const origin = complete.reduce((first, event) => Math.min(first, event.ts), Infinity);
  const last = complete.reduce((end, event) => Math.max(end, event.ts + (event.dur ?? 0)), origin);
  // At least a microsecond, so that a job of instant calls still has a scale.
  const whole = { from: 0, to: Math.max(last - origin, 1) / 1000 };
  if (zoom !== undefined && !(zoom.to > zoom.from)) throw new Error(`the zoom window ${zoom.from}..${zoom.to} ms is empty`);
  // Colours by operation, the same in every panel.
  const operations = [...new Set(complete.map(operationOf))];
  const timeline: Timeline = { tracks, origin, colorOf: (event) => COLORS[operations.indexOf(operationOf(event)) % COLORS.length] as string };
  const panelHeight = SUBTITLE + tracks.length * LANE + AXIS;
  const panels: [Window, string][] = [[whole, 'the whole job']];
  if (zoom !== undefined) panels.push([zoom, `zoomed in: ${zoom.from} to ${zoom.to} ms`]);
  const legendTop = TITLE + panels.length * panelHeight;
  const height = legendTop + Math.ceil(operations.length / 6) * LEGEND_ROW + 10;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="15">${escape(title)}</text>`,
    // Spread in an array, not in push(): a panel of a long job has more parts than a call takes arguments.
    ...panels.flatMap(([window, subtitle], index) => panel(timeline, window, subtitle, TITLE + index * panelHeight, index)),
  ];
  if (zoom !== undefined) {
    // Where the zoomed panel lies in the whole job.
    const x = (ms: number) => LABEL_WIDTH + (ms / whole.to) * PLOT_WIDTH;
    parts.push(`<rect x="${x(zoom.from).toFixed(1)}" y="${TITLE + SUBTITLE - 3}" width="${Math.max(x(zoom.to) - x(zoom.from), 2).toFixed(1)}" height="${tracks.length * LANE + 6}" fill="none" stroke="black" stroke-width="1.5"/>`);
  }
  operations.forEach((operation, index) => {
    const left = LABEL_WIDTH + (index % 6) * (PLOT_WIDTH / 6);
    const top = legendTop + Math.floor(index / 6) * LEGEND_ROW;
    parts.push(`<rect x="${left}" y="${top}" width="14" height="12" fill="${COLORS[index % COLORS.length]}"/>`);
    parts.push(`<text x="${left + 20}" y="${top + 10}">${escape(operation)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

interface Timeline {
  readonly tracks: readonly Track[];
  /** ts of the first event (µs). */
  readonly origin: number;
  readonly colorOf: (event: TraceEvent) => string;
}

/** One lane per track over `window`, with its time axis, from `top` down. */
function panel({ tracks, origin, colorOf }: Timeline, window: Window, subtitle: string, top: number, index: number): string[] {
  const { from, to } = window;
  const plotTop = top + SUBTITLE;
  const plotHeight = tracks.length * LANE;
  const x = (ms: number) => LABEL_WIDTH + ((ms - from) / (to - from)) * PLOT_WIDTH;
  const startOf = (event: TraceEvent) => (event.ts - origin) / 1000;
  const endOf = (event: TraceEvent) => (event.ts + (event.dur ?? 0) - origin) / 1000;
  const clip = `plot${index}`;
  const parts = [
    `<text x="${LABEL_WIDTH}" y="${top + 14}" font-size="12" fill="#333">${escape(subtitle)}</text>`,
    `<defs><clipPath id="${clip}"><rect x="${LABEL_WIDTH}" y="${plotTop}" width="${PLOT_WIDTH}" height="${plotHeight}"/></clipPath></defs>`,
  ];
  tracks.forEach((track, lane) => {
    const laneTop = plotTop + lane * LANE;
    parts.push(`<rect x="${LABEL_WIDTH}" y="${laneTop}" width="${PLOT_WIDTH}" height="${LANE}" fill="${lane % 2 === 0 ? '#f4f4f4' : '#ffffff'}"/>`);
    const [name, detail] = track.name.split(' | ');
    parts.push(`<text x="${LABEL_WIDTH - 8}" y="${laneTop + 15}" text-anchor="end" font-weight="bold">${escape(name ?? '')}</text>`);
    parts.push(`<text x="${LABEL_WIDTH - 8}" y="${laneTop + 28}" text-anchor="end" fill="#555" font-size="10">${escape(detail ?? '')}</text>`);
  });
  const { step, values } = ticks(from, to);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  for (const tick of values) {
    parts.push(`<line x1="${x(tick).toFixed(1)}" y1="${plotTop}" x2="${x(tick).toFixed(1)}" y2="${plotTop + plotHeight + 4}" stroke="#ccc"/>`);
    parts.push(`<text x="${x(tick).toFixed(1)}" y="${plotTop + plotHeight + 17}" text-anchor="middle">${tick.toFixed(decimals)}</text>`);
  }
  parts.push(`<text x="${LABEL_WIDTH + PLOT_WIDTH / 2}" y="${plotTop + plotHeight + 33}" text-anchor="middle">time since the first event (ms)</text>`);
  tracks.forEach((track, lane) => {
    const boxTop = plotTop + lane * LANE + (LANE - BOX) / 2;
    for (const event of track.events) {
      if (endOf(event) < from || startOf(event) > to) continue;
      const left = Math.max(x(startOf(event)), LABEL_WIDTH);
      const width = Math.max(Math.min(x(endOf(event)), LABEL_WIDTH + PLOT_WIDTH) - left, 0.6);
      // A white edge keeps back-to-back calls apart, where a box is wide enough to keep its colour.
      const edge = width >= 3 ? ' stroke="white" stroke-width="0.75"' : '';
      parts.push(`<rect x="${left.toFixed(2)}" y="${boxTop}" width="${width.toFixed(2)}" height="${BOX}" fill="${colorOf(event)}"${edge} clip-path="url(#${clip})"><title>${escape(event.name)}</title></rect>`);
      if (width > event.name.length * CHAR_WIDTH + 6) parts.push(`<text x="${(left + 3).toFixed(1)}" y="${boxTop + 16}" fill="white">${escape(event.name)}</text>`);
    }
  });
  parts.push(`<rect x="${LABEL_WIDTH}" y="${plotTop}" width="${PLOT_WIDTH}" height="${plotHeight}" fill="none" stroke="#999"/>`);
  return parts;
}

/** Tracks in process order, then by tid, named "endpoint 3 | process 1 (host, pid 42)". */
function tracksOf(events: readonly TraceEvent[]): Track[] {
  const processNames = new Map<number, string>();
  const processOrder = new Map<number, number>();
  const tracks = new Map<string, Track>();
  const trackOf = (event: TraceEvent): Track => {
    const key = `${event.pid}/${event.tid}`;
    let track = tracks.get(key);
    if (track === undefined) {
      track = { pid: event.pid, tid: event.tid, name: `tid ${event.tid}`, events: [] };
      tracks.set(key, track);
    }
    return track;
  };
  for (const event of events) {
    if (event.ph === 'X') trackOf(event).events.push(event);
    else if (event.ph === 'M' && event.name === 'thread_name') trackOf(event).name = event.args?.name ?? '';
    else if (event.ph === 'M' && event.name === 'process_name') processNames.set(event.pid, event.args?.name ?? '');
    else if (event.ph === 'M' && event.name === 'process_sort_index') processOrder.set(event.pid, event.args?.sort_index ?? event.pid);
  }
  const ordered = [...tracks.values()].sort((a, b) => (processOrder.get(a.pid) ?? a.pid) - (processOrder.get(b.pid) ?? b.pid) || a.tid - b.tid);
  for (const track of ordered) track.name = `${track.name} | ${processNames.get(track.pid) ?? `pid ${track.pid}`}`;
  return ordered;
}

/** About eight round ticks (1, 2 or 5 × 10^k ms) from `from` to `to`. */
function ticks(from: number, to: number): { step: number; values: number[] } {
  const rough = (to - from) / 8;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((factor) => factor * power >= rough) ?? 10) * power;
  const values: number[] = [];
  for (let index = Math.ceil(from / step - 1e-9); index * step <= to + step * 1e-9; index += 1) values.push(index * step);
  return { step, values };
}

/**
 * The events of trace file `file`: the joined trace a job writes, or one endpoint's part (the JSON
 * array form without its end, as a process that died or a job that aborted leaves it); where an
 * aborted job left no `file` but its parts (`<file>.<endpoint rank>`), the events of all of them.
 */
export function readTraceEvents(file: string): TraceEvent[] {
  if (!fs.existsSync(file)) {
    const parts = partsOf(file);
    if (parts.length === 0) throw new Error(`${file}: there is no such trace file, nor parts of one (${path.basename(file)}.<endpoint rank>)`);
    return parts.flatMap(readTraceEvents);
  }
  const text = fs.readFileSync(file, 'utf8');
  if (text.trimStart().startsWith('[')) {
    // A part: its events, however its array ends (or does not).
    return eventsOfPart(text).map((event) => JSON.parse(event) as TraceEvent);
  }
  const { traceEvents } = JSON.parse(text) as { traceEvents?: unknown };
  if (!Array.isArray(traceEvents)) throw new Error(`${file} is no trace: it holds no traceEvents array`);
  return traceEvents as TraceEvent[];
}

/** The parts `<file>.<endpoint rank>` in `file`'s directory, by endpoint rank. */
function partsOf(file: string): string[] {
  const prefix = `${path.basename(file)}.`;
  return fs
    .readdirSync(path.dirname(file))
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)))
    .map((name) => path.join(path.dirname(file), name));
}

function main(argv: readonly string[]): void {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] as string;
    if (argument.startsWith('--')) options[argument.slice(2)] = argv[++index] ?? '';
    else positional.push(argument);
  }
  const [input, output] = positional;
  if (input === undefined || output === undefined) {
    process.stderr.write('usage: node dist/bench/trace-svg.js trace.json timeline.svg [--zoom from,to] [--title text]\n');
    process.exitCode = 2;
    return;
  }
  const traceEvents = readTraceEvents(input);
  const [from, to] = (options['zoom'] ?? '').split(',').map(Number);
  const zoom = options['zoom'] === undefined ? undefined : { from: from ?? NaN, to: to ?? NaN };
  fs.writeFileSync(output, timelineSvg(traceEvents, options['title'] ?? path.basename(input), zoom));
}

if (isEntryPoint(import.meta.url)) main(process.argv.slice(2));
