// Something opened at its first use rather than at startup (a module, a runtime), shared by every caller. A
// failure is not kept: the next use tries again.
export interface AtFirstUse<T> {
  /** the value, opening it on the first call */
  get(): Promise<T>;
  /** the value if it is open, without opening it */
  ifOpen(): T | undefined;
  /** the value once an opening under way has ended, without opening it; undefined when none opened */
  settled(): Promise<T | undefined>;
}

export function atFirstUse<T>(open: () => Promise<T>): AtFirstUse<T> {
  let value: T | undefined;
  let opening: Promise<T> | undefined;
  return {
    get: () =>
      (opening ??= open().then(
        (opened) => (value = opened),
        (error: unknown) => {
          opening = undefined;
          throw error;
        },
      )),
    ifOpen: () => value,
    settled: async () => (await opening?.catch(() => undefined)) ?? value,
  };
}
