// Styles of the CI pages: the log and the step list.

/** Appended to the site stylesheet. */
export const CI_CSS = `
pre.log{margin:0;padding:.6rem .8rem;max-height:70vh;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft)}
ol.steps{margin:0;padding:.5rem .8rem .5rem 2.2rem}ol.steps li{padding:.15rem 0}
`;
