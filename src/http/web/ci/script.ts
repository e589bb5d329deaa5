// Progressive enhancement of the job page: follow the live log over server-sent events from
// where the page's log ends (`data-next`), appending text nodes (never markup), updating the
// job's and the steps' states, and stopping at the job's end. Without it the page still shows
// the log so far and a refresh link.

/** Appended to the site script. */
export const CI_JS = `
(() => {
  const log = document.getElementById("log");
  if (!log || log.dataset.live !== "1" || !window.EventSource) return;
  const badge = (el, s) => { if (el) { el.textContent = s; el.className = "state state-" + s; } };
  const es = new EventSource(log.dataset.events + "?from=" + encodeURIComponent(log.dataset.next || "0"));
  es.addEventListener("log", (e) => {
    const atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    log.append(JSON.parse(e.data).text);
    if (atEnd) log.scrollTop = log.scrollHeight;
  });
  es.addEventListener("state", (e) => {
    const d = JSON.parse(e.data);
    badge(document.getElementById("job-state"), d.state);
    d.steps.forEach((s, i) => badge(document.querySelector('li[data-step="' + i + '"] .state'), s.state));
  });
  es.addEventListener("end", (e) => {
    es.close();
    badge(document.getElementById("job-state"), JSON.parse(e.data).state);
    log.dataset.live = "0";
    for (const a of document.querySelectorAll("a.refresh")) a.hidden = true;
  });
})();
`;
