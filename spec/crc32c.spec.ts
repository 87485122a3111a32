/** The frame checksum's CRC32C: the standard vector, and the addon and JavaScript agreeing. */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { crc32c, crc32cInJavaScript, nativeChecksum } from '../transport/crc32c.js';

describe('CRC32C', () => {
  it('gives the Castagnoli check value of "123456789" (0xe3069283), in pieces too', () => {
    const bytes = Buffer.from('123456789');
    expect(crc32c(bytes)).to.equal(0xe3069283);
    expect(crc32cInJavaScript(bytes)).to.equal(0xe3069283);
    expect(crc32c(bytes.subarray(4), crc32c(bytes.subarray(0, 4)))).to.equal(0xe3069283);
    expect(crc32c(new Uint8Array(32))).to.equal(0x8a9136aa);
  });

  it('sums in the checksum addon what JavaScript sums, at every length and alignment', function () {
    if (!nativeChecksum) {
      console.log('      (skipped: the checksum addon is not built; npm rebuild ccjs builds it)');
      this.skip();
    }
    const data = randomBytes(70_000);
    for (const length of [0, 1, 7, 8, 9, 63, 255, 256, 257, 1000, 4099, 65_536]) {
      for (const offset of [0, 1, 3, 5]) {
        const bytes = data.subarray(offset, offset + length);
        expect(crc32c(bytes, 0x1234_5678), `${length} bytes at ${offset}`).to.equal(crc32cInJavaScript(bytes, 0x1234_5678));
      }
    }
    // Continuing a CRC across pieces gives the CRC of the whole.
    expect(crc32c(data.subarray(40_000), crc32c(data.subarray(0, 40_000)))).to.equal(crc32cInJavaScript(data));
  });
});
