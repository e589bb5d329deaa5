// Recognising an uploaded picture (issue 33): PNG, JPEG or WebP by magic number AND a header
// that parses, with both sides at most 4096 pixels, the file whole (no bytes missing, none after
// its end). Nothing else is accepted: SVG (script), GIF, HTML or anything named .png. Why so
// strict: the bytes are served back to browsers from our own origin; a file that is exactly one
// well-formed picture, served with its sniffed type, nosniff and a sandboxing CSP, cannot be
// read as a page. Every loop below is bounded by the file (at most AVATAR_MAX_BYTES).
import { crc32 } from "node:zlib";
import { Unprocessable, UnsupportedMediaType } from "../../errors.ts";

/** The largest picture accepted, in bytes. */
export const AVATAR_MAX_BYTES = 1024 * 1024;
/** The largest width or height accepted, in pixels. */
export const AVATAR_MAX_SIDE = 4096;

/** What a picture was recognised as. */
export interface SniffedImage {
  type: "image/png" | "image/jpeg" | "image/webp";
  ext: "png" | "jpg" | "webp";
  width: number;
  height: number;
}

const NOT_A_PICTURE = "only PNG, JPEG or WebP pictures are accepted";

function broken(what: string): never {
  throw Unprocessable(`the ${what} is damaged or incomplete`);
}

function sides(type: SniffedImage["type"], width: number, height: number): SniffedImage {
  const name = type === "image/png" ? "PNG" : type === "image/jpeg" ? "JPEG" : "WebP";
  if (width < 1 || height < 1) broken(`${name} picture`);
  if (width > AVATAR_MAX_SIDE || height > AVATAR_MAX_SIDE)
    throw Unprocessable(`the picture is ${width}×${height} pixels; at most ${AVATAR_MAX_SIDE}×${AVATAR_MAX_SIDE} is accepted`);
  const ext = type === "image/png" ? "png" : type === "image/jpeg" ? "jpg" : "webp";
  return { type, ext, width, height };
}

/** The PNG signature (PNG spec §5.2). */
const PNG_MAGIC = "\x89PNG\r\n\x1a\n";

const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u32le = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

/** Valid bit depths per PNG colour type (PNG spec §11.2.2). */
const PNG_DEPTHS: Readonly<Record<number, readonly number[]>> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

/** PNG: the signature, IHDR first (with a good CRC and a valid depth), every chunk within the file, IEND last and nothing after it. */
function png(b: Uint8Array): SniffedImage {
  if (b.length < 8 + 25 + 12) broken("PNG picture");
  if (u32be(b, 8) !== 13 || ascii(b, 12, 4) !== "IHDR") broken("PNG picture");
  if (crc32(b.subarray(12, 29)) !== u32be(b, 29)) broken("PNG picture");
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  const depth = b[24]!;
  const colour = b[25]!;
  if (!PNG_DEPTHS[colour]?.includes(depth) || b[26] !== 0 || b[27] !== 0 || b[28]! > 1) broken("PNG picture");
  let at = 33;
  let sawData = false;
  for (;;) {
    if (at + 12 > b.length) broken("PNG picture");
    const len = u32be(b, at);
    const type = ascii(b, at + 4, 4);
    if (!/^[A-Za-z]{4}$/.test(type) || len > b.length - at - 12) broken("PNG picture");
    if (type === "IHDR") broken("PNG picture");
    if (type === "IDAT") sawData = true;
    at += 12 + len;
    if (type === "IEND") break;
  }
  if (!sawData || at !== b.length) broken("PNG picture");
  return sides("image/png", width, height);
}

/** JPEG: SOI, marker segments that fit, a frame header (SOF) before the scan, EOI as the last two bytes. */
function jpeg(b: Uint8Array): SniffedImage {
  if (b.length < 4 || b[b.length - 2] !== 0xff || b[b.length - 1] !== 0xd9) broken("JPEG picture");
  let at = 2;
  let size: { width: number; height: number } | null = null;
  for (;;) {
    if (at + 4 > b.length) broken("JPEG picture");
    if (b[at] !== 0xff) broken("JPEG picture");
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0xd9 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) broken("JPEG picture");
    const len = u16be(b, at + 2);
    if (len < 2 || at + 2 + len > b.length) broken("JPEG picture");
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (len < 8) broken("JPEG picture");
      size = { height: u16be(b, at + 5), width: u16be(b, at + 7) };
    }
    at += 2 + len;
    // Start of scan: the entropy-coded data follows, up to the EOI checked above.
    if (marker === 0xda) break;
  }
  if (!size) broken("JPEG picture");
  return sides("image/jpeg", size.width, size.height);
}

/** WebP: RIFF whose size is the file's, chunks that fit, the size from VP8X, VP8 or VP8L. */
function webp(b: Uint8Array): SniffedImage {
  if (b.length < 12 + 8 + 10 || u32le(b, 4) + 8 !== b.length) broken("WebP picture");
  let at = 12;
  let size: { width: number; height: number } | null = null;
  let sawImage = false;
  while (at < b.length) {
    if (at + 8 > b.length) broken("WebP picture");
    const type = ascii(b, at, 4);
    const len = u32le(b, at + 4);
    const body = at + 8;
    if (len > b.length - body) broken("WebP picture");
    if (type === "VP8X" && at === 12) {
      if (len < 10) broken("WebP picture");
      size = { width: u24le(b, body + 4) + 1, height: u24le(b, body + 7) + 1 };
    } else if (type === "VP8 ") {
      if (len < 10 || b[body + 3] !== 0x9d || b[body + 4] !== 0x01 || b[body + 5] !== 0x2a) broken("WebP picture");
      size ??= { width: (b[body + 6]! | (b[body + 7]! << 8)) & 0x3fff, height: (b[body + 8]! | (b[body + 9]! << 8)) & 0x3fff };
      sawImage = true;
    } else if (type === "VP8L") {
      if (len < 5 || b[body] !== 0x2f) broken("WebP picture");
      const bits = u32le(b, body + 1);
      size ??= { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
      sawImage = true;
    } else if (type === "ANMF") {
      sawImage = true;
    } else if (!/^[A-Z0-9 ]{4}$/i.test(type)) broken("WebP picture");
    // Chunks are padded to an even length.
    at = body + len + (len & 1);
  }
  if (at !== b.length || !size || !sawImage) broken("WebP picture");
  return sides("image/webp", size.width, size.height);
}

/**
 * What `bytes` are: a whole PNG, JPEG or WebP picture of at most 4096×4096. 415 for anything
 * else (SVG, GIF, HTML, …), 422 for a damaged, truncated or oversized one of the three.
 */
export function sniffImage(bytes: Uint8Array): SniffedImage {
  if (bytes.length >= 8 && ascii(bytes, 0, 8) === PNG_MAGIC) return png(bytes);
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return jpeg(bytes);
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return webp(bytes);
  throw UnsupportedMediaType(NOT_A_PICTURE);
}
