// Text imports of embedded files (migrations).
declare module "*.sql" {
  const text: string;
  export default text;
}
