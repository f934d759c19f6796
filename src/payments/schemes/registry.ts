// The schemes the gate accepts, by (scheme, chain family).
import type { ChainFamily } from '../../x402/networks.ts';
import type { PaymentScheme } from './scheme.ts';
import { exactEvm } from './exact-evm.ts';
import { exactSvm } from './exact-svm.ts';
import { uptoEvm } from './upto-evm.ts';
import { authCaptureEvm } from './auth-capture-evm.ts';

export class SchemeRegistry {
  private readonly schemes = new Map<string, PaymentScheme>();

  constructor(schemes: readonly PaymentScheme[] = [exactEvm, exactSvm, uptoEvm, authCaptureEvm]) {
    for (const scheme of schemes) this.register(scheme);
  }

  register(scheme: PaymentScheme): void {
    this.schemes.set(`${scheme.scheme}/${scheme.family}`, scheme);
  }

  get(scheme: string, family: ChainFamily): PaymentScheme | undefined {
    return this.schemes.get(`${scheme}/${family}`);
  }

  /** every scheme name accepted on a family, for error messages */
  names(family: ChainFamily): string[] {
    return [...this.schemes.values()].filter((s) => s.family === family).map((s) => s.scheme);
  }
}
