// The /v1/docs viewer: one self-contained page (no CDN, no external asset) that reads
// /v1/openapi.json and lists every route with its parameters, bodies, answers and examples.
// Served from the binary, so it works offline and behind a firewall.

/** The HTML of the viewer. */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API</title>
<style>
  :root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg2: #f6f8fa; --accent: #0969da; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --bg2: #151b23; --accent: #4493f8; } }
  body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); margin: 0 auto; max-width: 980px; padding: 1.5rem; }
  h1 { margin: 0 0 .25rem; } .muted { color: var(--muted); }
  input[type=search] { width: 100%; padding: .5rem .7rem; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: transparent; color: inherit; margin: 1rem 0; box-sizing: border-box; }
  h2 { border-bottom: 1px solid var(--line); padding-bottom: .25rem; margin-top: 2rem; font-size: 1.15rem; }
  details { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; }
  summary { cursor: pointer; padding: .45rem .7rem; list-style: none; display: flex; gap: .7rem; align-items: baseline; }
  summary::-webkit-details-marker { display: none; }
  .method { font: 600 12px ui-monospace, monospace; min-width: 4.2rem; text-transform: uppercase; }
  .get { color: #1a7f37; } .post { color: #0969da; } .put, .patch { color: #9a6700; } .delete { color: #cf222e; }
  .path { font-family: ui-monospace, monospace; } .body { padding: 0 .9rem .8rem; }
  pre { background: var(--bg2); padding: .6rem .8rem; border-radius: 6px; overflow-x: auto; font-size: 13px; }
  table { border-collapse: collapse; width: 100%; font-size: 14px; } td, th { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  code { font-family: ui-monospace, monospace; }
</style>
</head>
<body>
<h1 id="title">svc API</h1>
<div class="muted" id="desc">Loading <a href="/v1/openapi.json">/v1/openapi.json</a>…</div>
<input type="search" id="filter" placeholder="Filter routes (path, method or words of the summary)" autocomplete="off">
<div id="routes"></div>
<noscript><p>This page needs JavaScript to render the description; the raw description is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></noscript>
<script>
"use strict";
const el = (tag, attrs, ...kids) => { const e = document.createElement(tag); for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v); for (const c of kids) if (c != null) e.append(c); return e; };
const pretty = (v) => JSON.stringify(v, null, 2);
let spec;
function resolve(schema, depth) {
  if (!schema || depth > 8) return schema;
  if (schema.$ref) { const name = schema.$ref.split("/").pop(); return resolve((spec.components && spec.components.schemas || {})[name], depth + 1); }
  return schema;
}
function shape(schema, depth) {
  schema = resolve(schema, depth || 0);
  if (!schema) return null;
  if (schema.examples && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.anyOf || schema.oneOf) return shape((schema.anyOf || schema.oneOf)[0], (depth || 0) + 1);
  if (schema.type === "object" || schema.properties) { const o = {}; for (const [k, v] of Object.entries(schema.properties || {})) o[k] = shape(v, (depth || 0) + 1); return o; }
  if (schema.type === "array") return [shape(schema.items, (depth || 0) + 1)];
  if (schema.enum) return schema.enum[0];
  return schema.type || "value";
}
function section(title, node) { return node ? [el("h4", {}, title), node] : []; }
function render(filter) {
  const root = document.getElementById("routes");
  root.replaceChildren();
  const groups = new Map();
  for (const [path, ops] of Object.entries(spec.paths || {})) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op || typeof op !== "object" || method === "parameters") continue;
      const text = (method + " " + path + " " + (op.summary || "") + " " + (op.description || "")).toLowerCase();
      if (filter && !filter.split(/\\s+/).every((w) => text.includes(w))) continue;
      const parts = path.split("/").filter(Boolean);
      const group = (op.tags && op.tags[0]) || (parts[0] === "v1" ? (parts[1] === "orgs" && parts[3] ? parts[3] : parts[1]) : parts[0]) || "/";
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push({ path, method, op });
    }
  }
  for (const [group, list] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
    root.append(el("h2", {}, group));
    for (const { path, method, op } of list) {
      const body = el("div", { class: "body" });
      if (op.description) body.append(el("p", {}, op.description));
      const params = (op.parameters || []).map((p) => el("tr", {}, el("td", {}, el("code", {}, p.name)), el("td", {}, p.in), el("td", {}, p.required ? "required" : ""), el("td", {}, (p.schema && (p.schema.description || p.schema.type)) || "")));
      if (params.length) body.append(...section("Parameters", el("table", {}, ...params)));
      const req = op.requestBody && op.requestBody.content;
      if (req) for (const [type, c] of Object.entries(req)) body.append(...section("Request body (" + type + ")", el("pre", {}, pretty(shape(c.schema)))));
      for (const [status, r] of Object.entries(op.responses || {})) {
        const content = r.content && (r.content["application/json"] || Object.values(r.content)[0]);
        body.append(el("h4", {}, status + " " + (r.description || "")));
        if (content && content.schema) body.append(el("pre", {}, pretty(shape(content.schema))));
      }
      root.append(el("details", {}, el("summary", {}, el("span", { class: "method " + method }, method), el("span", { class: "path" }, path), el("span", { class: "muted" }, op.summary || "")), body));
    }
  }
  if (!root.children.length) root.append(el("p", { class: "muted" }, "No route matches."));
}
fetch("/v1/openapi.json").then((r) => r.json()).then((s) => {
  spec = s;
  document.getElementById("title").textContent = (s.info && s.info.title || "svc") + " API";
  document.getElementById("desc").replaceChildren((s.info && s.info.description) || "", " · ", el("a", { href: "/v1/openapi.json" }, "openapi.json"));
  const filter = document.getElementById("filter");
  filter.addEventListener("input", () => render(filter.value.trim().toLowerCase()));
  render("");
}).catch((e) => { document.getElementById("desc").textContent = "Could not load /v1/openapi.json: " + e; });
</script>
</body>
</html>
`;
