/**
 * Output of the job's endpoints, prefixed so that people can tell who said what. Lines from a
 * worker thread carry its endpoint rank; under ccjrun they carry it as a marker that ccjrun turns
 * into the same "[rank] " prefix it puts on every process's own lines.
 */
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';

/** Starts a line that names its endpoint: MARKER_START rank MARKER_END text. */
export const MARKER_START = '\x1e';
export const MARKER_END = '\x1f';

/**
 * The line by which process 0 announces its coordinator's `host:port` on stdout
 * (`CCJS_COORDINATOR=file:-`), for a launcher that starts the other processes once it knows it.
 */
export const COORDINATOR_ANNOUNCEMENT = `${MARKER_START}coordinator${MARKER_END}`;

/** Rewrites a stream line by line; a last line without newline is completed at the end. */
export function lineTransform(rewrite: (line: Buffer) => Buffer): Transform {
  const newline = 0x0a; // one byte in UTF-8 and never part of a multi-byte character
  let partialLine: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const data = partialLine.length > 0 ? Buffer.concat([partialLine, chunk]) : chunk;
      const pieces: Buffer[] = [];
      let lineStart = 0;
      for (let lineEnd = data.indexOf(newline); lineEnd !== -1; lineEnd = data.indexOf(newline, lineStart)) {
        pieces.push(rewrite(data.subarray(lineStart, lineEnd + 1)));
        lineStart = lineEnd + 1;
      }
      partialLine = data.subarray(lineStart);
      callback(null, pieces.length > 0 ? Buffer.concat(pieces) : undefined);
    },
    flush(callback: TransformCallback) {
      callback(null, partialLine.length > 0 ? rewrite(Buffer.concat([partialLine, Buffer.from('\n')])) : undefined);
    },
  });
}

/**
 * Pipes `source` into `destination` without ending it. Each pipe adds one listener per event
 * (unpipe, error, close, finish, drain) to the destination; the destination's limit grows by one
 * with each, so that many sources forwarded into one stream (every thread's or process's output
 * into stdout) are not taken for a leak, while a real leak on it still is.
 */
export function forwardInto(source: Readable, destination: Writable): void {
  const limit = destination.getMaxListeners();
  if (limit !== 0 && limit !== Infinity) destination.setMaxListeners(limit + 1);
  source.pipe(destination, { end: false });
}

/** Prefixes every line with `prefix`. */
export function linePrefixer(prefix: string): Transform {
  const prefixBytes = Buffer.from(prefix);
  return lineTransform((line) => Buffer.concat([prefixBytes, line]));
}

/**
 * ccjrun's prefixer for one process: marked lines get "[their rank] ", the others "[rank] " of the
 * process's main endpoint.
 */
export function endpointPrefixer(mainRank: number): Transform {
  const plain = Buffer.from(`[${mainRank}] `);
  return lineTransform((line) => {
    if (line[0] !== MARKER_START.charCodeAt(0)) return Buffer.concat([plain, line]);
    const end = line.indexOf(MARKER_END.charCodeAt(0));
    if (end < 0) return Buffer.concat([plain, line]);
    return Buffer.concat([Buffer.from(`[${line.subarray(1, end).toString()}] `), line.subarray(end + 1)]);
  });
}
