// What counts as an uploaded picture (issue 33): whole PNG, JPEG and WebP files of at most
// 4096×4096, recognised by their bytes; anything else refused with a reason.
import { describe, expect, test } from "bun:test";
import { sniffImage } from "../../../src/services/people/avatar-sniff.ts";
import { concat, GIF, HTML_AS_PNG, JPEG, PNG, pngSized, SVG_WITH_SCRIPT, WEBP, WEBP_LOSSLESS } from "../../helpers/images.ts";

const refusal = (bytes: Uint8Array) => {
  try {
    sniffImage(bytes);
    return null;
  } catch (e) {
    return { code: (e as { code?: string }).code, message: (e as Error).message };
  }
};

describe("sniffImage", () => {
  test("real PNG, JPEG and WebP (lossy and lossless) pictures are recognised with their size", () => {
    expect([PNG, JPEG, WEBP, WEBP_LOSSLESS].map(sniffImage)).toEqual([
      { type: "image/png", ext: "png", width: 3, height: 2 },
      { type: "image/jpeg", ext: "jpg", width: 3, height: 2 },
      { type: "image/webp", ext: "webp", width: 3, height: 2 },
      { type: "image/webp", ext: "webp", width: 3, height: 2 },
    ]);
  });

  test("other formats are refused as unsupported: GIF, SVG with script, HTML named .png, empty", () => {
    for (const bytes of [GIF, SVG_WITH_SCRIPT, HTML_AS_PNG, new Uint8Array(0)])
      expect(refusal(bytes)).toEqual({ code: "unsupported_media_type", message: "only PNG, JPEG or WebP pictures are accepted" });
  });

  test("a picture over 4096 pixels on a side is refused, whatever its file size", () => {
    expect(sniffImage(pngSized(4096, 4096))).toMatchObject({ width: 4096, height: 4096 });
    expect(refusal(pngSized(4097, 10))).toEqual({ code: "unprocessable", message: "the picture is 4097×10 pixels; at most 4096×4096 is accepted" });
    expect(refusal(pngSized(100_000, 100_000))?.code).toBe("unprocessable");
    expect(refusal(pngSized(0, 5))?.code).toBe("unprocessable");
  });

  test("truncated files are refused at every length", () => {
    for (const full of [PNG, JPEG, WEBP, WEBP_LOSSLESS])
      for (let n = 1; n < full.length; n++) {
        const r = refusal(full.subarray(0, n));
        expect({ n, code: r?.code }).toEqual({ n, code: expect.stringMatching(/^(unprocessable|unsupported_media_type)$/) });
      }
  });

  test("polyglots are refused: a picture with HTML after its end, HTML after a PNG signature", () => {
    const html = new TextEncoder().encode("<html><script>alert(1)</script></html>");
    for (const pic of [PNG, JPEG, WEBP]) expect(refusal(concat(pic, html))?.code).toBe("unprocessable");
    expect(refusal(concat(PNG.subarray(0, 8), html))?.code).toBe("unprocessable");
    // A flipped bit in the PNG header breaks its checksum.
    const bad = new Uint8Array(PNG);
    bad[17] = bad[17]! ^ 1;
    expect(refusal(bad)?.code).toBe("unprocessable");
  });

  test("fuzzed bytes never throw anything but a refusal", () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (const base of [PNG, JPEG, WEBP, WEBP_LOSSLESS])
      for (let i = 0; i < 300; i++) {
        const b = new Uint8Array(base);
        for (let k = 0; k < 4; k++) b[rand() % b.length] = rand();
        const r = refusal(b);
        if (r) expect(["unprocessable", "unsupported_media_type"]).toContain(r.code!);
      }
  });
});
