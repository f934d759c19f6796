// Every compatibility case, in the order the matrix lists them.
import type { CompatCase } from './case.ts';
import { recordedCliCases } from './recorded-clis.ts';
import { frameworkCases } from './frameworks.ts';
import { cliThroughProxyCases } from './clis-through-proxy.ts';

export const COMPAT_CASES: readonly CompatCase[] = [...recordedCliCases, ...cliThroughProxyCases, ...frameworkCases];
