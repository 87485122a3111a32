/**
 * The performance model of Taboada, Touriño and Doallo, Performance Analysis of Message-Passing Libraries on High-Speed Clusters, section 3: the linear model
 *
 *   T(n) = t0 + ti · tb·n / (t0 + tb·n) + tb·n
 *
 * (startup t0, intercept ti weighted by the share of transfer time in Hockney's estimate,
 * transfer time per byte tb) fitted per primitive, algorithm and member count from (n bytes,
 * T µs) samples, beside Hockney's T(n) = t0 + tb·n; both compared by their average absolute
 * relative error. Derived metrics: asymptotic bandwidth Bw_as = 1/tb, specific performance
 * π0 = 1/t0, their aggregated forms f(p)·Bw_as and f(p)·π0, and the peak aggregated metrics
 * (maximum over the member counts), printed as markdown tables in the paper's style.
 */
import type { CollectiveName } from '../src/collectives/algorithm.js';

/** What the suite measures: a collective, or the point-to-point ping-pong (half round trip). */
export type Primitive = CollectiveName | 'pingpong';

export interface Sample {
  readonly bytes: number;
  readonly microseconds: number;
}

/** The model of the performance-model paper (Taboada, Touriño and Doallo): µs, µs and µs per byte. */
export interface LinearModel {
  readonly t0: number;
  readonly ti: number;
  readonly tb: number;
}

export interface HockneyModel {
  readonly t0: number;
  readonly tb: number;
}

export function linearModelTime(model: LinearModel, bytes: number): number {
  const hockney = model.t0 + model.tb * bytes;
  const transferShare = hockney > 0 ? (model.tb * bytes) / hockney : 0;
  return model.t0 + model.ti * transferShare + model.tb * bytes;
}

export function hockneyTime(model: HockneyModel, bytes: number): number {
  return model.t0 + model.tb * bytes;
}

/** Mean of |predicted − measured| / measured over the samples. */
export function averageRelativeError(samples: readonly Sample[], predict: (bytes: number) => number): number {
  return samples.reduce((total, sample) => total + Math.abs(predict(sample.bytes) - sample.microseconds) / sample.microseconds, 0) / samples.length;
}

// ---------- least squares ----------

/** Solves a small dense system by Gaussian elimination with partial pivoting; undefined if singular. */
function solve(matrix: readonly (readonly number[])[], right: readonly number[]): number[] | undefined {
  const size = right.length;
  const rows = matrix.map((row, i) => [...row, right[i]]);
  for (let column = 0; column < size; column += 1) {
    let pivot = column;
    for (let row = column + 1; row < size; row += 1) if (Math.abs(rows[row][column]) > Math.abs(rows[pivot][column])) pivot = row;
    if (!(Math.abs(rows[pivot][column]) > 0)) return undefined;
    [rows[column], rows[pivot]] = [rows[pivot], rows[column]];
    for (let row = column + 1; row < size; row += 1) {
      const factor = rows[row][column] / rows[column][column];
      for (let k = column; k <= size; k += 1) rows[row][k] -= factor * rows[column][k];
    }
  }
  const solution = new Array<number>(size).fill(0);
  for (let row = size - 1; row >= 0; row -= 1) {
    let sum = rows[row][size];
    for (let k = row + 1; k < size; k += 1) sum -= rows[row][k] * solution[k];
    solution[row] = sum / rows[row][row];
  }
  return solution.every(Number.isFinite) ? solution : undefined;
}

/** JᵀJ and Jᵀr of a design given by columns. */
function normalEquations(columns: readonly (readonly number[])[], target: readonly number[]): { matrix: number[][]; right: number[] } {
  const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, value, i) => sum + value * b[i], 0);
  return { matrix: columns.map((a) => columns.map((b) => dot(a, b))), right: columns.map((column) => dot(column, target)) };
}

/**
 * Non-negative least squares for a handful of columns: the best unconstrained solution over
 * every subset of columns whose coefficients are all >= 0 (the others held at 0) is the exact
 * NNLS optimum, and 2^3 subsets cost nothing.
 */
function nonNegativeLeastSquares(columns: readonly (readonly number[])[], target: readonly number[]): number[] {
  let best = { coefficients: columns.map(() => 0), residual: target.reduce((sum, value) => sum + value * value, 0) };
  for (let subset = 1; subset < 1 << columns.length; subset += 1) {
    const chosen = columns.map((_, i) => i).filter((i) => subset & (1 << i));
    const { matrix, right } = normalEquations(chosen.map((i) => columns[i]), target);
    const solution = solve(matrix, right);
    if (solution === undefined || solution.some((value) => value < 0)) continue;
    const coefficients = columns.map(() => 0);
    chosen.forEach((column, k) => (coefficients[column] = solution[k]));
    const residual = target.reduce((sum, value, row) => sum + (value - columns.reduce((fit, column, i) => fit + column[row] * coefficients[i], 0)) ** 2, 0);
    if (residual < best.residual) best = { coefficients, residual };
  }
  return best.coefficients;
}

function usable(samples: readonly Sample[]): Sample[] {
  const kept = samples.filter((sample) => sample.microseconds > 0 && sample.bytes >= 0 && Number.isFinite(sample.microseconds));
  if (kept.length === 0) throw new RangeError('cannot fit a model to no samples with positive times');
  return kept;
}

/**
 * Hockney's t0 and tb (>= 0) minimizing the squared relative error, so that short messages
 * count as much as long ones (a plain regression would fit the megabytes and miss the bytes).
 */
export function fitHockney(samples: readonly Sample[]): HockneyModel {
  const kept = usable(samples);
  const [t0, tb] = nonNegativeLeastSquares(
    [kept.map((s) => 1 / s.microseconds), kept.map((s) => s.bytes / s.microseconds)],
    kept.map(() => 1),
  );
  return { t0, tb };
}

/** The paper's own procedure: t0 is the time of the shortest message; ti and tb the regression of T − t0 on n. */
function paperEstimate(samples: readonly Sample[]): LinearModel {
  const shortest = Math.min(...samples.map((s) => s.bytes));
  const t0 = Math.min(...samples.filter((s) => s.bytes === shortest).map((s) => s.microseconds));
  const longer = samples.filter((s) => s.bytes > shortest);
  const [ti, tb] = nonNegativeLeastSquares(
    [longer.map((s) => 1 / s.microseconds), longer.map((s) => s.bytes / s.microseconds)],
    longer.map((s) => (s.microseconds - t0) / s.microseconds),
  );
  return { t0, ti, tb };
}

/** For Hockney's t0 and tb, the ti (>= 0) that fits best: the model is linear in ti. */
function withBestIntercept(samples: readonly Sample[], hockney: HockneyModel): LinearModel {
  const share = (bytes: number) => linearModelTime({ ...hockney, ti: 1 }, bytes) - hockneyTime(hockney, bytes);
  const [ti] = nonNegativeLeastSquares(
    [samples.map((s) => share(s.bytes) / s.microseconds)],
    samples.map((s) => 1 - hockneyTime(hockney, s.bytes) / s.microseconds),
  );
  return { ...hockney, ti };
}

function relativeCost(samples: readonly Sample[], model: LinearModel): number {
  return samples.reduce((sum, s) => sum + (linearModelTime(model, s.bytes) / s.microseconds - 1) ** 2, 0);
}

/** Relative residuals and their derivatives by t0, ti and tb. */
function linearize(samples: readonly Sample[], { t0, ti, tb }: LinearModel): { residuals: number[]; jacobian: number[][] } {
  const residuals: number[] = [];
  const jacobian: number[][] = [[], [], []];
  for (const { bytes, microseconds } of samples) {
    const hockney = t0 + tb * bytes;
    const share = hockney > 0 ? (tb * bytes) / hockney : 0;
    const squared = hockney > 0 ? hockney * hockney : Infinity;
    residuals.push((t0 + ti * share + tb * bytes) / microseconds - 1);
    jacobian[0].push((1 - (ti * tb * bytes) / squared) / microseconds);
    jacobian[1].push(share / microseconds);
    jacobian[2].push((bytes + (ti * t0 * bytes) / squared) / microseconds);
  }
  return { residuals, jacobian };
}

/** Levenberg–Marquardt on the relative residuals, parameters kept >= 0 by projection. */
function refine(samples: readonly Sample[], start: LinearModel): LinearModel {
  let model = start;
  let cost = relativeCost(samples, model);
  let damping = 1e-3;
  for (let iteration = 0; iteration < 300 && damping < 1e14 && cost > 0; iteration += 1) {
    const { residuals, jacobian } = linearize(samples, model);
    const { matrix, right } = normalEquations(jacobian, residuals);
    // Marquardt's scaling makes the damping independent of the parameters' units (µs vs µs/byte).
    const floor = 1e-12 * Math.max(...matrix.map((row, i) => row[i]));
    const damped = matrix.map((row, i) => row.map((value, j) => (i === j ? value + damping * Math.max(value, floor) : value)));
    const step = solve(damped, right.map((value) => -value));
    if (step === undefined) {
      damping *= 10;
      continue;
    }
    const candidate = { t0: Math.max(0, model.t0 + step[0]), ti: Math.max(0, model.ti + step[1]), tb: Math.max(0, model.tb + step[2]) };
    const candidateCost = relativeCost(samples, candidate);
    if (candidateCost < cost) {
      const converged = cost - candidateCost < 1e-15 * cost;
      model = candidate;
      cost = candidateCost;
      damping = Math.max(damping / 10, 1e-12);
      if (converged) break;
    } else {
      damping *= 10;
    }
  }
  return model;
}

/**
 * t0, ti, tb (>= 0) minimizing the squared relative error: Levenberg–Marquardt started from the
 * paper's own estimate and from Hockney's fit, keeping the better. With a single message size
 * (a barrier) only t0 is defined, and ti = tb = 0.
 */
export function fitLinearModel(samples: readonly Sample[]): LinearModel {
  const kept = usable(samples);
  const hockney = fitHockney(kept);
  if (new Set(kept.map((s) => s.bytes)).size < 2) return { t0: hockney.t0 + hockney.tb * kept[0].bytes, ti: 0, tb: 0 };
  const fits = [paperEstimate(kept), withBestIntercept(kept, hockney)].map((start) => refine(kept, start));
  return fits.reduce((best, fit) => (relativeCost(kept, fit) < relativeCost(kept, best) ? fit : best));
}

// ---------- metrics ----------

/**
 * f(p): total bytes a collective moves per byte of message length (Taboada, Touriño and Doallo, Performance Analysis of Message-Passing Libraries on High-Speed Clusters, section 3), so
 * that f(p)·Bw_as is the aggregated bandwidth. The paper's tables use p − 1 for the barrier too.
 */
export function aggregationFactor(primitive: Primitive, members: number): number {
  const p = members;
  switch (primitive) {
    case 'pingpong':
      return 1;
    case 'broadcast':
    case 'allToAll':
    case 'reduce':
    case 'scan':
    case 'barrier':
      return p - 1;
    case 'scatter':
    case 'gather':
      return (p - 1) / p;
    case 'allReduce':
      return 2 * (p - 1);
    case 'allGather':
    case 'reduceScatter':
      return (p * p - 1) / p;
  }
}

/** Which primitive, variant (algorithm and payload) and member count a fit describes. */
export interface SeriesKey {
  readonly primitive: Primitive;
  readonly variant: string;
  readonly members: number;
}

export interface Series extends SeriesKey {
  readonly samples: readonly Sample[];
}

export interface ModelFit extends SeriesKey {
  readonly linear: LinearModel;
  readonly hockney: HockneyModel;
  readonly linearError: number;
  readonly hockneyError: number;
  /** Only t0 is meaningful: every sample had the same size (a barrier). */
  readonly latencyOnly: boolean;
}

export function fitSeries(series: Series): ModelFit {
  const linear = fitLinearModel(series.samples);
  const hockney = fitHockney(series.samples);
  return {
    primitive: series.primitive,
    variant: series.variant,
    members: series.members,
    linear,
    hockney,
    linearError: averageRelativeError(series.samples, (bytes) => linearModelTime(linear, bytes)),
    hockneyError: averageRelativeError(series.samples, (bytes) => hockneyTime(hockney, bytes)),
    latencyOnly: new Set(series.samples.map((s) => s.bytes)).size < 2,
  };
}

export interface Metrics {
  /** 1/tb in MB/s (bytes per µs). */
  readonly asymptoticBandwidth: number;
  /** 1/t0 in 10³ per second (the paper's "KB/s"). */
  readonly specificPerformance: number;
  readonly aggregatedBandwidth: number;
  readonly aggregatedSpecificPerformance: number;
}

export function metricsOf(fit: ModelFit): Metrics {
  const factor = aggregationFactor(fit.primitive, fit.members);
  const asymptoticBandwidth = fit.latencyOnly || fit.linear.tb === 0 ? NaN : 1 / fit.linear.tb;
  const specificPerformance = 1000 / fit.linear.t0;
  return { asymptoticBandwidth, specificPerformance, aggregatedBandwidth: factor * asymptoticBandwidth, aggregatedSpecificPerformance: factor * specificPerformance };
}

// ---------- tables ----------

/** Three significant digits, the paper's precision; "N/A" for undefined values. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return 'N/A';
  const magnitude = Math.abs(value);
  if (magnitude >= 100 || value === 0) return value.toFixed(0);
  return value.toFixed(magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3);
}

const percent = (value: number) => `${(100 * value).toFixed(1)}%`;
const nanosecondsPerByte = (tb: number) => tb * 1000;

/** One row per primitive, variant and member count: both models, their errors, and the metrics. */
export function modelTable(fits: readonly ModelFit[]): string {
  const lines = [
    '| primitive | variant | p | t0 {µs} | ti {µs} | tb {ns/byte} | Bw_as {MB/s} | π0 {10³/s} | Bw_as^ag {MB/s} | π0^ag {10³/s} | error | Hockney t0 {µs} | Hockney tb {ns/byte} | Hockney error |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const fit of fits) {
    const metrics = metricsOf(fit);
    const transfer = (value: number) => (fit.latencyOnly ? 'N/A' : formatNumber(value));
    lines.push(
      `| ${[
        fit.primitive,
        fit.variant,
        fit.members,
        formatNumber(fit.linear.t0),
        transfer(fit.linear.ti),
        transfer(nanosecondsPerByte(fit.linear.tb)),
        formatNumber(metrics.asymptoticBandwidth),
        formatNumber(metrics.specificPerformance),
        formatNumber(metrics.aggregatedBandwidth),
        formatNumber(metrics.aggregatedSpecificPerformance),
        percent(fit.linearError),
        formatNumber(fit.hockney.t0),
        transfer(nanosecondsPerByte(fit.hockney.tb)),
        percent(fit.hockneyError),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

const ceilingLog = (p: number) => Math.ceil(Math.log2(p));

/**
 * The least-squares a + b·x with a >= 0: a time or a time per byte at no members cannot be
 * negative, so when the free fit's a is, a is 0 and b the slope of the line through the origin.
 */
function lineWithNonNegativeIntercept(xs: readonly number[], values: readonly number[]): { a: number; b: number } {
  const { matrix, right } = normalEquations([xs.map(() => 1), xs], values);
  const [a, b] = solve(matrix, right) ?? [values[0], 0];
  if (a >= 0) return { a, b };
  return { a: 0, b: xs.reduce((sum, x, i) => sum + x * values[i], 0) / xs.reduce((sum, x) => sum + x * x, 0) };
}

/** The paper writes t0(p), ti(p), tb(p) as a + b·p or a + b·⌈lp⌉ (lp = log2 p), whichever fits; a is never negative. */
export function formulaInMembers(points: readonly (readonly [members: number, value: number])[]): string {
  if (points.length === 1 || points.every(([, value]) => value === points[0][1])) return formatNumber(points[0][1]);
  const candidates = [
    { suffix: 'p', x: (p: number) => p },
    { suffix: '⌈lp⌉', x: ceilingLog },
  ].map(({ suffix, x }) => {
    const { a, b } = lineWithNonNegativeIntercept(points.map(([p]) => x(p)), points.map(([, value]) => value));
    const residual = points.reduce((sum, [p, value]) => sum + (value - a - b * x(p)) ** 2, 0);
    return { suffix, a, b, residual };
  });
  // Prefer the O(p) form unless the logarithmic one fits clearly better (two member counts fit both exactly).
  const scale = points.reduce((sum, [, value]) => sum + value * value, 0);
  const best = candidates[0].residual > 1e-9 * scale && candidates[1].residual < 0.5 * candidates[0].residual ? candidates[1] : candidates[0];
  const slope = formatNumber(Math.abs(best.b));
  if (Number(slope) === 0) return formatNumber(best.a);
  // With a at 0 the slope fits non-negative values through the origin, so it is not negative.
  if (Number(formatNumber(best.a)) === 0) return `${slope}${best.suffix}`;
  return `${formatNumber(best.a)} ${best.b < 0 ? '-' : '+'} ${slope}${best.suffix}`;
}

/** The paper's Table 1: models as functions of p and the peak aggregated metrics, per primitive and variant. */
export function peakTable(fits: readonly ModelFit[]): string {
  const lines = [
    '| primitive | variant | t0(p) {µs} | ti(p) {µs} | tb(p) {ns/byte} | π0^pag {10³/s} | Bw_as^pag {MB/s} | p |',
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  const groups = new Map<string, ModelFit[]>();
  for (const fit of fits) {
    const key = `${fit.primitive}\u0000${fit.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), fit]);
  }
  for (const group of groups.values()) {
    const sorted = [...group].sort((a, b) => a.members - b.members);
    const { primitive, variant, latencyOnly } = sorted[0];
    const formula = (parameter: (fit: ModelFit) => number) => formulaInMembers(sorted.map((fit) => [fit.members, parameter(fit)] as const));
    const peak = (metric: (metrics: Metrics) => number) => Math.max(...sorted.map((fit) => metric(metricsOf(fit))));
    const memberRange = sorted.length === 1 ? `${sorted[0].members}` : `${sorted[0].members}–${sorted[sorted.length - 1].members}`;
    lines.push(
      `| ${[
        primitive,
        variant,
        formula((fit) => fit.linear.t0),
        latencyOnly ? 'N/A' : formula((fit) => fit.linear.ti),
        latencyOnly ? 'N/A' : formula((fit) => nanosecondsPerByte(fit.linear.tb)),
        formatNumber(peak((m) => m.aggregatedSpecificPerformance)),
        formatNumber(peak((m) => m.aggregatedBandwidth)),
        memberRange,
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
