// Progressive enhancement of the review page (issue 28). Without it every control is a plain form:
// a line number is a link to `?comment=path:side:line` that draws the comment form server-side,
// and every POST answers 303 back to its anchor. With it:
// - a click on a line number opens the comment form under that line, cloned from the page's
//   <template id="line-comment-template"> (no markup is built here); a shift-click, or a drag from
//   one number to another of the same side of the same file, comments on the range;
// - forms marked `data-fragment` are sent with fetch and `X-Svc-Fragment: 1`; the server answers
//   the re-rendered thread (one renderer, no client templating), which replaces the element with
//   the same id, or takes the place of the form it came from; a refusal shows its reason in the
//   form. No full reload. The answer's X-Svc-Pending header (the person's pending review
//   comments after the post) updates the review box's count and the "Start a review" buttons.
// The CSP allows no inline script: this is part of the one bundle (kit/assets.ts).

/** The script, appended to the one the pages load. */
export const CHANGES_JS = `
(() => {
  const files = document.querySelector("[data-review-files]");
  const tpl = document.getElementById("line-comment-template");
  // A line-number link: its cell's class says the side (o: old, n: new), its text the number,
  // its cell's id (c-{file}-{side}-{line}) finds it again.
  const LINK = "table.diff[data-file] td.o > a, table.diff[data-file] td.n > a";
  const linkOf = (t) => (t instanceof Element ? t.closest(LINK) : null);
  const sideOf = (a) => (a.parentElement.classList.contains("o") ? "old" : "new");
  const lineOf = (a) => Number(a.textContent);
  const tableOf = (a) => a.closest("table.diff");
  const clearMarks = () => { for (const r of document.querySelectorAll("table.diff tr.sel")) r.classList.remove("sel"); };
  const numberLink = (table, side, n) => document.getElementById("c-" + table.dataset.file + "-" + side + "-" + n)?.firstElementChild ?? null;

  const open = (table, side, start, end) => {
    for (const f of document.querySelectorAll("tr.comment-row.scripted")) if (!f.querySelector("textarea").value.trim()) f.remove();
    const last = numberLink(table, side, end);
    if (!last) return;
    clearMarks();
    for (let n = start; n <= end; n++) numberLink(table, side, n)?.closest("tr").classList.add("sel");
    const row = tpl.content.firstElementChild.cloneNode(true);
    row.classList.add("scripted");
    const set = (name, value) => { const i = row.querySelector("[name='" + name + "']"); if (i) i.value = value; };
    set("path", table.dataset.path);
    set("side", side);
    set("line", String(end));
    set("start_line", start < end ? String(start) : "");
    const what = row.querySelector("[data-what]");
    if (what) what.textContent = (start < end ? "lines " + start + "–" + end : "line " + end) + " (" + side + ") of " + table.dataset.path;
    let after = last.closest("tr");
    while (after.nextElementSibling && after.nextElementSibling.matches("tr.thread-row, tr.comment-row")) after = after.nextElementSibling;
    after.after(row);
    row.querySelector("textarea").focus();
  };

  if (files && tpl) {
    let anchor = null;
    let down = null;
    let dragged = false;
    files.addEventListener("mousedown", (e) => {
      const a = linkOf(e.target);
      // A drag's own click lands on the rows' common ancestor (no link): the next press starts afresh.
      dragged = false;
      down = a && e.button === 0 && !e.shiftKey ? a : null;
      // A link would start the browser's own drag (of its URL): a drag here selects lines.
      if (down) e.preventDefault();
    });
    files.addEventListener("mouseup", (e) => {
      const a = linkOf(e.target);
      if (down && a && a !== down && tableOf(a) === tableOf(down) && sideOf(a) === sideOf(down)) {
        const x = lineOf(down), y = lineOf(a);
        dragged = true;
        anchor = down;
        open(tableOf(a), sideOf(a), Math.min(x, y), Math.max(x, y));
      }
      down = null;
    });
    files.addEventListener("click", (e) => {
      const a = linkOf(e.target);
      if (!a || e.metaKey || e.ctrlKey || e.altKey) return;
      e.preventDefault();
      if (dragged) { dragged = false; return; }
      const n = lineOf(a);
      if (e.shiftKey && anchor && tableOf(anchor) === tableOf(a) && sideOf(anchor) === sideOf(a)) {
        const m = lineOf(anchor);
        open(tableOf(a), sideOf(a), Math.min(m, n), Math.max(m, n));
        return;
      }
      anchor = a;
      open(tableOf(a), sideOf(a), n, n);
    });
    document.addEventListener("click", (e) => {
      const b = e.target instanceof Element ? e.target.closest("[data-cancel]") : null;
      if (!b) return;
      const row = b.closest("tr.comment-row");
      if (!row || !row.classList.contains("scripted")) return;
      e.preventDefault();
      row.remove();
      clearMarks();
    });
  }

  /** The person's pending comments are now n: the counts, their notes, the draft buttons (the template's too). */
  const setPending = (n) => {
    const text = n + " pending " + (n === 1 ? "comment" : "comments");
    for (const root of tpl ? [document, tpl.content] : [document]) {
      for (const e of root.querySelectorAll("[data-pending]")) e.textContent = text;
      for (const e of root.querySelectorAll("[data-pending-note]")) e.hidden = n === 0;
      for (const b of root.querySelectorAll("button[data-draft]")) b.textContent = n ? "Add review comment" : "Start a review";
    }
  };
  // "Load diff" on a collapsed file: the same address with X-Svc-Fragment answers that file's
  // section alone, which takes the collapsed one's place (no reload); a failure follows the link.
  document.addEventListener("click", async (e) => {
    const a = e.target instanceof Element ? e.target.closest("a[data-load-diff]") : null;
    if (!a || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    const section = a.closest("section");
    a.setAttribute("aria-busy", "true");
    try {
      const res = await fetch(a.href, { headers: { "x-svc-fragment": "1" }, credentials: "same-origin" });
      const node = res.ok ? parse(await res.text()) : null;
      if (!node || !section) { location.href = a.href; return; }
      section.replaceWith(node);
    } catch {
      location.href = a.href;
    }
  });

  /** Markup from the server as one element. */
  const parse = (text) => {
    const t = document.createElement("template");
    t.innerHTML = text.trim();
    return t.content.firstElementChild;
  };

  document.addEventListener("submit", async (e) => {
    const form = e.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-fragment")) return;
    e.preventDefault();
    const body = new URLSearchParams(new FormData(form, e.submitter ?? undefined));
    const buttons = [...form.querySelectorAll("button")];
    for (const b of buttons) b.disabled = true;
    let old = form.querySelector(".form-error");
    old?.remove();
    try {
      const res = await fetch(form.action, { method: "POST", body, headers: { "x-svc-fragment": "1" }, credentials: "same-origin", redirect: "manual" });
      const text = await res.text();
      if (!res.ok) {
        const doc = new DOMParser().parseFromString(text, "text/html");
        const msg = doc.querySelector("[role=alert]")?.textContent?.trim() || "Not saved (" + res.status + "). Reload the page and try again.";
        const p = document.createElement("p");
        p.className = "error form-error";
        p.setAttribute("role", "alert");
        p.textContent = msg;
        form.prepend(p);
        return;
      }
      const pending = res.headers.get("x-svc-pending");
      if (pending !== null && /^[0-9]+$/.test(pending)) setPending(Number(pending));
      const node = parse(text);
      if (!node) return;
      const same = node.id ? document.getElementById(node.id) : null;
      const row = form.closest("tr.comment-row");
      if (same) {
        same.replaceWith(node);
        row?.remove();
      } else if (row) {
        const tr = document.createElement("tr");
        tr.className = "thread-row";
        const td = document.createElement("td");
        td.colSpan = 3;
        td.append(node);
        tr.append(td);
        row.replaceWith(tr);
      } else if (form.dataset.append) {
        const li = document.createElement("li");
        li.className = "thread-item";
        li.append(node);
        document.querySelector(form.dataset.append)?.append(li);
        form.reset();
      }
      clearMarks();
    } finally {
      for (const b of buttons) if (b.isConnected) b.disabled = false;
    }
  });
})();
`;
