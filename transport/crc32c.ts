/**
 * CRC32C (Castagnoli, the checksum of iSCSI, ext4 and Gloo's/UCX's users on unreliable fabrics):
 * the network devices' opt-in frame checksum. The checksum addon (native/crc32c.cc, built as
 * ccjs_checksum) uses the CPU's crc32 instruction; where it is not built, or for a few bytes
 * (a call into the addon costs about as much as 100 bytes here), JavaScript tables, eight bytes
 * per step (slicing-by-8).
 */
import { createRequire } from 'node:module';
import { FrameError } from '../src/base/errors.js';

interface ChecksumAddon {
  crc32c(bytes: Uint8Array, crc: number): number;
}

/** Fewer bytes than this are summed in JavaScript. */
const NATIVE_BYTES = 256;

function loadAddon(): ChecksumAddon | undefined {
  if (process.env.CCJS_NO_NATIVE_CHECKSUM === '1') return undefined;
  try {
    return createRequire(import.meta.url)('../../build/Release/ccjs_checksum.node') as ChecksumAddon;
  } catch {
    return undefined;
  }
}

const addon = loadAddon();

/** Whether crc32c runs in the checksum addon (for large inputs). */
export const nativeChecksum = addon !== undefined;

const POLYNOMIAL = 0x82f63b78;

/** Eight tables of 256 entries: table t gives the CRC of a byte followed by t zero bytes. */
const TABLES = new Int32Array(8 * 256);
for (let byte = 0; byte < 256; byte += 1) {
  let crc = byte;
  for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
  TABLES[byte] = crc;
}
for (let table = 1; table < 8; table += 1) {
  for (let byte = 0; byte < 256; byte += 1) {
    const previous = TABLES[(table - 1) * 256 + byte] as number;
    TABLES[table * 256 + byte] = (previous >>> 8) ^ (TABLES[previous & 0xff] as number);
  }
}

/** The CRC32C of `bytes`, continuing `crc` (the CRC of the bytes before them; 0 to start). */
export function crc32c(bytes: Uint8Array, crc = 0): number {
  return addon !== undefined && bytes.length >= NATIVE_BYTES ? addon.crc32c(bytes, crc) : crc32cInJavaScript(bytes, crc);
}

/** crc32c with JavaScript's tables only. */
export function crc32cInJavaScript(bytes: Uint8Array, crc = 0): number {
  const t = TABLES;
  let c = ~crc;
  let i = 0;
  const end8 = bytes.length - 8;
  for (; i <= end8; i += 8) {
    const low = c ^ ((bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24));
    c =
      (t[1792 + (low & 0xff)] as number) ^
      (t[1536 + ((low >>> 8) & 0xff)] as number) ^
      (t[1280 + ((low >>> 16) & 0xff)] as number) ^
      (t[1024 + (low >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < bytes.length; i += 1) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

/** Refuses a frame whose bytes sum to `crc` where its sender computed `sent` (FrameError, field 'checksum'). */
export function expectSum(crc: number, sent: number): void {
  if (crc !== sent) throw new FrameError('checksum', `a frame whose CRC32C is 0x${crc.toString(16)}, not 0x${sent.toString(16)} as its sender computed: its bytes changed on the way`);
}
