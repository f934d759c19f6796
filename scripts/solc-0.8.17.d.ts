// solc 0.8.17 from npm (an alias of the solc package at that version) ships no types; the part we call.
declare module 'solc-0.8.17' {
  const solc: { compile(input: string): string; version(): string };
  export default solc;
}
