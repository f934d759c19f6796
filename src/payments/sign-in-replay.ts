// "Pay once, fetch again by signing in": a payer who sends the same request again with a SIGN-IN-WITH-X header
// instead of a payment gets the stored result of its own settled payment for that request, with no new work and
// no new charge. Signed in but never paid for this request: nothing here, the caller answers the 402.
import type { Ledger, StoredResult } from '../store/ledger.ts';
import type { NetworkName } from '../x402/networks.ts';
import { verifySignIn } from '../x402/sign-in-with-x.ts';

export interface SignInReplay {
  header: string;
  origin: string;
  networks: readonly NetworkName[];
  ledger: Ledger;
  requestHash: string;
}

export async function paidResultForSignIn({ header, origin, networks, ledger, requestHash }: SignInReplay): Promise<StoredResult | undefined> {
  const { address } = await verifySignIn(header, origin, networks, ledger);
  return (await ledger.findPaidResult(address, requestHash))?.result ?? undefined;
}

/** Whether a signed-in address is a payment's payer: EVM addresses whatever their letter case, base58 exactly. */
export function isSamePayer(address: string, payer: string): boolean {
  return address.startsWith('0x') ? address.toLowerCase() === payer.toLowerCase() : address === payer;
}
