/** Command-line flags of the benchmarks: `--name value` pairs and bare `--switch`es. */
export interface Args {
  /** The value after `flag`, or undefined when the flag is absent. */
  text(flag: string): string | undefined;
  /** A positive number after `flag`, else `dflt`. */
  num(flag: string, dflt: number): number;
  has(flag: string): boolean;
}

export function readArgs(argv: string[]): Args {
  const text = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    text,
    num(flag, dflt) {
      const v = Number(text(flag));
      return Number.isFinite(v) && v > 0 ? v : dflt;
    },
    has: (flag) => argv.includes(flag),
  };
}
