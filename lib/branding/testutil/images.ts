/**
 * Real, tiny images built from their bytes, so the tests need no image file or library: a 1×1 PNG
 * (signature, IHDR, one IDAT of zlib data, IEND, each chunk with its CRC) and a 1×1 greyscale
 * baseline JPEG (one quantization table, one-code Huffman tables, one block: DC 0 and end of block).
 */
import { crc32, deflateSync } from 'node:zlib';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A width × height RGB PNG of one colour; `extra` bytes of a private ancillary chunk make it as large as a test needs. */
export function pngOf(width = 1, height = 1, rgb: [number, number, number] = [0x1a, 0x73, 0xe8], extra = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, deflate, adaptive filtering, no interlace
  const row = Buffer.from([0, ...Array.from({ length: width }, () => rgb).flat()]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from(PNG_SIGNATURE), chunk('IHDR', ihdr),
    ...(extra > 0 ? [chunk('prVt', Buffer.alloc(extra, 0x61))] : []),
    chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A 1×1 mid-grey baseline JPEG (141 bytes). */
export function jpegOf(): Buffer {
  const marker = (code: number, data: number[]) => [0xff, code, (data.length + 2) >> 8, (data.length + 2) & 0xff, ...data];
  const oneCodeTable = (tableClass: number) => [tableClass << 4, 1, ...Array<number>(15).fill(0), 0];
  return Buffer.from([
    0xff, 0xd8, // SOI
    ...marker(0xdb, [0, ...Array<number>(64).fill(1)]), // DQT: table 0, all ones
    ...marker(0xc0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0]), // SOF0: 8 bits, 1×1, one component (id 1, 1×1 sampling, table 0)
    ...marker(0xc4, oneCodeTable(0)), // DHT: DC table 0, one code '0' for category 0
    ...marker(0xc4, oneCodeTable(1)), // DHT: AC table 0, one code '0' for end of block
    ...marker(0xda, [1, 1, 0x00, 0, 63, 0]), // SOS: component 1, tables 0/0, spectral 0–63
    0x3f, // DC '0' + EOB '0', padded with ones
    0xff, 0xd9, // EOI
  ]);
}

export const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
