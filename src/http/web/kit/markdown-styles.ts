// Styles of rendered Markdown (markdown.ts): heading anchors shown on hover or focus, task lists,
// keys, inline code, details. Code colours are the file view's (`hl-*`, `hljs-*` in repos/styles.ts).
export const MARKDOWN_CSS = `
.markdown h1,.markdown h2,.markdown h3,.markdown h4,.markdown h5,.markdown h6{scroll-margin-top:1rem}
.markdown .markdown-heading{display:flex;align-items:baseline;gap:.4rem}
.markdown a.anchor{color:var(--muted);opacity:0;text-decoration:none}
.markdown .markdown-heading:hover>a.anchor,.markdown a.anchor:focus,.markdown :target+a.anchor{opacity:1}
.markdown ul.contains-task-list,.markdown ol.contains-task-list{list-style:none;padding-left:1.4rem}
.markdown li.task-list-item>input.task-list-item-checkbox{margin:0 .3rem 0 -1.3rem;vertical-align:middle}
.markdown code,.markdown kbd,.markdown samp{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em}
.markdown :not(pre)>code{background:var(--soft);padding:.1em .35em;border-radius:4px}
.markdown pre code{font-size:.85rem;line-height:1.45}
.markdown kbd{padding:.1em .4em;border:1px solid var(--line);border-bottom-width:2px;border-radius:4px;background:var(--soft)}
.markdown mark{background:var(--mark);color:inherit}
.markdown details{margin:0 0 1rem}.markdown summary{cursor:pointer}
.markdown dl dt{font-weight:600}.markdown dl dd{margin:0 0 .5rem 1rem}
.markdown hr{border:0;border-top:1px solid var(--line)}
.markdown img[align=right]{margin-left:1rem}.markdown img[align=left]{margin-right:1rem}
`;
