/** The part of madge's API (github.com/pahen/madge, "API") that test/unit/codebase.test.ts uses; madge ships no types. */
declare module 'madge' {
  interface MadgeResult {
    /** Each cycle as the list of files on it, relative to the base directory. */
    circular(): string[][];
    obj(): Record<string, string[]>;
  }
  interface MadgeConfig {
    baseDir?: string;
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, unknown>;
  }
  export default function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
}
