// The site icon: a small SVG served under /static/ with a content hash (linked from every page)
// and at /favicon.ico, where browsers and tools look without asking the page.
import type { Asset } from "./assets.ts";

/** A branch and two commits on a rounded square; the colours read on light and dark tabs alike. */
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f883d"/><path d="M11 7v18M11 19c0-5 10-4 10-9" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/><circle cx="11" cy="25" r="3" fill="#fff"/><circle cx="21" cy="9" r="3" fill="#fff"/><circle cx="11" cy="7" r="3" fill="#fff"/></svg>`;

/** The icon. */
export const ICON: Readonly<Asset> = {
  url: `/static/icon-${new Bun.CryptoHasher("sha256").update(SVG).digest("hex").slice(0, 12)}.svg`,
  type: "image/svg+xml",
  body: SVG,
};
