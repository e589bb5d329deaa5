// Lossless bytes <-> string conversion for object headers and messages.
// Valid UTF-8 decodes normally; every byte that is not part of valid UTF-8 becomes the lone
// surrogate U+DC00+byte (Python's "surrogateescape"), so encodeText(decodeText(b)) equals b
// and objects re-serialize to the same bytes (and the same oid) even with non-UTF-8 content.

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();
const LONE_ESCAPE = /[\uDC80-\uDCFF]/u;

/** Decode bytes to a string without losing any byte (see the file comment). */
export function decodeText(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return decodeEscaped(bytes);
  }
}

/** Inverse of decodeText: UTF-8, with escaped bytes (lone U+DC80..U+DCFF) written back raw. */
export function encodeText(s: string): Uint8Array {
  if (!LONE_ESCAPE.test(s)) return encoder.encode(s);
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xdc80 && c <= 0xdcff) out.push(c - 0xdc00);
    else if (c >= 0xd800 && c <= 0xdfff) out.push(0xef, 0xbf, 0xbd);
    else if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

function decodeEscaped(b: Uint8Array): string {
  const units: number[] = [];
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    let cp = -1;
    let n = 0;
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if (c >= 0xc2 && c <= 0xdf && cont(b, i + 1)) {
      cp = ((c & 31) << 6) | (b[i + 1]! & 63);
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef && cont(b, i + 1) && cont(b, i + 2)) {
      cp = ((c & 15) << 12) | ((b[i + 1]! & 63) << 6) | (b[i + 2]! & 63);
      n = 3;
      if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) cp = -1;
    } else if (c >= 0xf0 && c <= 0xf4 && cont(b, i + 1) && cont(b, i + 2) && cont(b, i + 3)) {
      cp = ((c & 7) << 18) | ((b[i + 1]! & 63) << 12) | ((b[i + 2]! & 63) << 6) | (b[i + 3]! & 63);
      n = 4;
      if (cp < 0x10000 || cp > 0x10ffff) cp = -1;
    }
    if (cp < 0) {
      units.push(0xdc00 + c);
      i++;
    } else if (cp >= 0x10000) {
      units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 1023));
      i += n;
    } else {
      units.push(cp);
      i += n;
    }
  }
  let s = "";
  for (let k = 0; k < units.length; k += 8192) s += String.fromCharCode(...units.slice(k, k + 8192));
  return s;
}

function cont(b: Uint8Array, i: number): boolean {
  return i < b.length && (b[i]! & 0xc0) === 0x80;
}
