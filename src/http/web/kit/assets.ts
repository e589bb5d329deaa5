// The stylesheet and the one small script of the web pages, compiled into the binary and served
// under /static/ with a content hash in the URL (so they can be cached for a year).
import { ACCOUNT_CSS } from "../account/styles.ts";
import { ADMIN_CSS, REPO_SETTINGS_CSS } from "../admin/styles.ts";
import { CI_CSS } from "../ci/styles.ts";
import { CI_JS } from "../ci/script.ts";
import { DISCOVERY_CSS } from "../discovery/styles.ts";
import { REPO_CSS } from "../repos/styles.ts";
import { HIGHLIGHT_CSS } from "./highlight-classes.ts";
import { COMPARE_CSS } from "../repos/compare-styles.ts";
import { CHANGES_CSS } from "../changes/styles.ts";
import { CHANGES_JS } from "../changes/script.ts";
import { ISSUES_CSS } from "../issues/styles.ts";
import { REPO_JS } from "../repos/script.ts";
import { BLAME_CSS } from "../repos/blame-styles.ts";
import { MARKDOWN_CSS } from "./markdown-styles.ts";

/**
 * Light and dark themes follow the system setting; one column on a phone. Why the dark --link is
 * #3b82f6: a link in running text must differ from the text around it by 3:1 (axe's
 * link-in-text-block; #4493f8 on #e6edf3 is 2.6:1) and still read 4.5:1 on --bg and --soft.
 */
const BASE_CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--link:#0969da;--accent:#1f883d;--bad:#cf222e;--mark:#fff8c5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--soft:#151b23;--link:#3b82f6;--accent:#3fb950;--bad:#f85149;--mark:#3b2e00}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
a{color:var(--link);text-decoration:none}a:hover,a:focus{text-decoration:underline}
:focus-visible{outline:2px solid var(--link);outline-offset:2px}
header.top{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--soft)}
header.top .brand{font-weight:700;color:var(--fg)}header.top nav{margin-left:auto;display:flex;gap:.8rem;align-items:center}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem;word-break:break-word}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
.muted{color:var(--muted)}.error{color:var(--bad)}
.box{border:1px solid var(--line);border-radius:6px;overflow:hidden;margin:0 0 1rem}
.box>header{padding:.5rem .8rem;background:var(--soft);border-bottom:1px solid var(--line);display:flex;gap:.6rem;flex-wrap:wrap;align-items:center}
ul.list{list-style:none;margin:0;padding:0}ul.list>li{padding:.5rem .8rem;border-top:1px solid var(--line)}ul.list>li:first-child{border-top:0}
.badge{display:inline-block;font-size:.75rem;padding:0 .45rem;border:1px solid var(--line);border-radius:1rem;color:var(--muted);vertical-align:middle}
.crumbs{margin:.2rem 0 1rem;word-break:break-all}
form.stack{max-width:24rem;display:grid;gap:.8rem}
label{display:grid;gap:.25rem;font-weight:600}
input,select,button{font:inherit;color:inherit}
input[type=email],input[type=password],input[type=text]{padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);width:100%}
button,.button{display:inline-block;padding:.4rem .9rem;border:1px solid var(--line);border-radius:6px;background:var(--soft);cursor:pointer;color:var(--fg)}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
button.link{border:0;background:none;padding:0;color:var(--link)}
form.inline{display:inline}
details.menu{position:relative;display:inline-block}details.menu>summary{list-style:none;cursor:pointer}details.menu>summary::-webkit-details-marker{display:none}
details.menu>ul{position:absolute;z-index:2;min-width:14rem;max-height:20rem;overflow:auto;background:var(--bg);border:1px solid var(--line);border-radius:6px;margin:.3rem 0 0;padding:.3rem 0;list-style:none}
details.menu>ul li a{display:block;padding:.3rem .8rem;word-break:break-all}details.menu>ul li a[aria-current]{font-weight:700}
table.files{width:100%;border-collapse:collapse}table.files td{padding:.4rem .8rem;border-top:1px solid var(--line)}table.files tr:first-child td{border-top:0}
table.files td.size{text-align:right;color:var(--muted);white-space:nowrap;width:1%}
.clone{display:flex;gap:.4rem;align-items:center;flex-wrap:wrap}.clone input{flex:1;min-width:12rem;font-family:ui-monospace,monospace;font-size:.85rem}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}
table.code{border-collapse:collapse;width:100%}table.code td{padding:0 .8rem;vertical-align:top}
table.code td.n{width:1%;text-align:right;user-select:none}table.code td.n a{color:var(--muted)}
table.code td.l{white-space:pre;overflow-wrap:normal}table.code tr:target{background:var(--mark)}
.scroll{overflow-x:auto}
.markdown{padding:0 1rem;overflow-wrap:break-word}.markdown pre{background:var(--soft);padding:.8rem;overflow:auto;border-radius:6px}
.markdown img{max-width:100%}.markdown table{border-collapse:collapse}.markdown td,.markdown th{border:1px solid var(--line);padding:.3rem .6rem}
.markdown blockquote{margin:0;padding:0 1rem;color:var(--muted);border-left:.25rem solid var(--line)}
.commit-title{font-weight:600;word-break:break-word}
.sha{font-family:ui-monospace,monospace;font-size:.85rem}
.inh{margin:0;font-size:1rem}.pad{padding:.4rem .8rem;margin:0}.inl{display:inline}li.group{padding:.2rem .8rem}
.pager{display:flex;gap:1rem;margin:1rem 0}
@media (max-width:40rem){main{padding:.6rem}table.files td.size{display:none}header.top nav{margin-left:0;width:100%}}
`;

/** Progressive enhancement only: a "Copy" button beside each clone URL. Reading needs no script. */
const BASE_JS = `
for (const b of document.querySelectorAll("button[data-copy]")) {
  b.hidden = false;
  b.addEventListener("click", () => {
    const input = document.getElementById(b.dataset.copy);
    if (!input) return;
    navigator.clipboard.writeText(input.value).then(() => { b.textContent = "Copied"; setTimeout(() => { b.textContent = "Copy"; }, 1500); });
  });
}
`;

const CSS = BASE_CSS + HIGHLIGHT_CSS + REPO_CSS + CHANGES_CSS + COMPARE_CSS;
const JS = BASE_JS + REPO_JS + CHANGES_JS;

function hashOf(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 12);
}

/** A served asset: its URL (with the content hash) and its body. */
export interface Asset {
  url: string;
  type: string;
  body: string;
}

const ALL_CSS = CSS + ACCOUNT_CSS + ADMIN_CSS + CI_CSS + ISSUES_CSS + DISCOVERY_CSS + REPO_SETTINGS_CSS + BLAME_CSS + MARKDOWN_CSS;
const ALL_JS = JS + CI_JS;
/** The stylesheet. */
export const STYLE: Readonly<Asset> = { url: `/static/web-${hashOf(ALL_CSS)}.css`, type: "text/css; charset=utf-8", body: ALL_CSS };
/** The script. */
export const SCRIPT: Readonly<Asset> = { url: `/static/web-${hashOf(ALL_JS)}.js`, type: "text/javascript; charset=utf-8", body: ALL_JS };
