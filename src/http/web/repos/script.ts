// Progressive enhancement of the file page: #L12-L20 marks a range of lines, and a shift-click on
// a line number extends the mark from the last one clicked. Without the script #L12 still works
// (CSS :target); reading needs nothing here.

/** The script, appended to the one the pages load. */
export const REPO_JS = `
(() => {
  const table = document.querySelector("table.code");
  if (!table) return;
  const mark = () => {
    for (const r of table.querySelectorAll("tr.sel")) r.classList.remove("sel");
    const m = /^#L(\\d+)(?:-L?(\\d+))?$/.exec(location.hash);
    if (!m) return null;
    const a = Number(m[1]);
    const b = Number(m[2] ?? m[1]);
    for (let n = Math.min(a, b); n <= Math.max(a, b); n++) document.getElementById("L" + n)?.classList.add("sel");
    if (m[2]) document.getElementById("L" + Math.min(a, b))?.scrollIntoView({ block: "center" });
    return a;
  };
  let anchor = mark();
  addEventListener("hashchange", () => { anchor = mark() ?? anchor; });
  table.addEventListener("click", (e) => {
    const link = e.target instanceof Element ? e.target.closest("td.n a") : null;
    if (!link) return;
    const n = Number(link.getAttribute("href").slice(2));
    if (e.shiftKey && anchor) {
      e.preventDefault();
      const lo = Math.min(anchor, n), hi = Math.max(anchor, n);
      history.replaceState(null, "", "#L" + lo + "-L" + hi);
      mark();
    }
  });
})();
`;
