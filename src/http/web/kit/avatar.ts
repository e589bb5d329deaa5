// Avatars (issue 33): the generated identicon of a handle, and the `<img>` every page draws. The
// identicon is a pure function of the handle: SHA-256 of its lowercase form picks a hue and the
// cells of a 5×5 grid mirrored left to right, drawn on a pale tile of the same hue so it reads on
// light and dark pages alike (the picture carries its own background). Only presentation
// attributes, no <style> or script: the picture is served under `default-src 'none'; sandbox`.
import { createHash } from "node:crypto";
import { html, seg, type Html } from "./html.ts";

/** Cells per side of the grid. */
const GRID = 5;

/** The identicon of `handle` as SVG text (the same for any spelling of the handle's case). */
export function identicon(handle: string): string {
  const hash = createHash("sha256").update(handle.toLowerCase()).digest();
  const hue = ((hash[0]! << 8) | hash[1]!) % 360;
  const cells: string[] = [];
  // Columns 0..2 decide; 3 and 4 mirror 1 and 0. 15 bits from bytes 2.. (one byte per cell).
  for (let row = 0; row < GRID; row++) {
    for (let col = 0; col < 3; col++) {
      if ((hash[2 + row * 3 + col]! & 1) === 0) continue;
      for (const x of col === 2 ? [2] : [col, GRID - 1 - col]) cells.push(`M${1 + x * 2} ${1 + row * 2}h2v2h-2z`);
    }
  }
  // Why these tones: the pale tile keeps ≥ 3:1 against the cells in either page theme.
  const bg = `hsl(${hue} 35% 92%)`;
  const fg = `hsl(${hue} 55% 42%)`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 12 12" width="120" height="120" shape-rendering="crispEdges"><rect width="12" height="12" fill="${bg}"/><path fill="${fg}" d="${cells.join("")}"/></svg>`;
}

/** The address of a person's (or any name's) picture; `version` (from `avatarVersion`) makes it cacheable for good. */
export function avatarUrl(handle: string, version?: string | null): string {
  return `/avatars/${seg(handle.toLowerCase())}${version ? `?v=${seg(version)}` : ""}`;
}

/** The version of a stored avatar key (`avatars/{id}/{sha256}.{ext}`): a prefix of its hash; "i" for the identicon. */
export function avatarVersion(key: string | null | undefined): string {
  if (!key) return "i";
  const file = key.slice(key.lastIndexOf("/") + 1);
  return file.slice(0, Math.min(16, file.indexOf(".") < 0 ? file.length : file.indexOf(".")));
}

/**
 * The `<img>` of `handle`'s picture at `size` CSS pixels. `alt` defaults to the handle; pass "" where
 * the handle is written beside it (the picture then only decorates). Without `version` the address
 * is cached briefly (the picture may change), with it for a year.
 */
export function avatar(handle: string, size: number, opts: { alt?: string; version?: string | null } = {}): Html {
  const alt = opts.alt ?? handle;
  return html`<img class="avatar" src="${avatarUrl(handle, opts.version)}" alt="${alt}" width="${size}" height="${size}" loading="lazy" decoding="async">`;
}
