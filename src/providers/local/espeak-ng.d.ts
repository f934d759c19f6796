// Types for the parts of the espeak-ng package (an Emscripten build of the eSpeak NG CLI) we use.
declare module 'espeak-ng' {
  interface EspeakFs {
    writeFile(path: string, data: string | Uint8Array): void;
    readFile(path: string): Uint8Array;
  }
  interface EspeakInstance {
    FS: EspeakFs;
  }
  interface EspeakModuleOptions {
    /** command-line arguments; main() runs once, during instantiation */
    arguments?: string[];
    preRun?: Array<(module: EspeakInstance) => void>;
    print?: (line: string) => void;
    printErr?: (line: string) => void;
    /** called on exit(); the default sets process.exitCode */
    quit?: (status: number, toThrow: unknown) => void;
    /** imports and instance are WebAssembly objects (untyped: TypeScript's Node libs lack them) */
    instantiateWasm?: (imports: object, receive: (instance: object) => void) => object;
  }
  export default function ESpeakNg(options?: EspeakModuleOptions): Promise<EspeakInstance>;
}
