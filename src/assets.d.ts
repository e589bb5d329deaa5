// Text imports of embedded files (migrations).
declare module "*.sql" {
  const text: string;
  export default text;
}

// ssh2's table of algorithms this build supports (untyped upstream).
declare module "ssh2/lib/protocol/constants.js" {
  const constants: Record<string, unknown>;
  export default constants;
}
