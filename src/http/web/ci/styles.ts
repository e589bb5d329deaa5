// Styles of the CI pages: the log, the step list, and the run's job graph (columns by level).

/** Appended to the site stylesheet. */
export const CI_CSS = `
pre.log{margin:0;padding:.6rem .8rem;max-height:70vh;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft)}
ol.steps{margin:0;padding:.5rem .8rem .5rem 2.2rem}ol.steps li{padding:.15rem 0}
.graph{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(13rem,1fr);gap:1.4rem;overflow-x:auto;padding:.8rem}
ol.stage{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;justify-content:center;gap:.6rem;position:relative}
ol.stage+ol.stage::before{content:"";position:absolute;left:-.95rem;top:10%;bottom:10%;border-left:2px solid var(--line)}
li.job-card{border:1px solid var(--line);border-radius:6px;padding:.5rem .6rem;background:var(--bg);overflow-wrap:anywhere}
li.job-card p{margin:.3rem 0 0;font-size:.85rem}li.job-card .notice{padding:.3rem .5rem}
nav.attempts{display:flex;gap:.8rem;flex-wrap:wrap;font-size:.9rem}nav.attempts a[aria-current]{font-weight:700}
`;
