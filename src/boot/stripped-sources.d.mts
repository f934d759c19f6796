export declare const SOURCE_ROOT: string;
export declare const STRIPPED_DIR: string;
export declare function strippedPath(source: string): string;
