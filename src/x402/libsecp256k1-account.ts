// A viem local account whose signatures are libsecp256k1's (libsecp256k1.ts): the account the facilitators settle
// with (every exact, upto and channel transaction, every claim and refund the receiver authorizes) and the one the
// buyer's signer wraps (client/fast-signer.ts). The bytes are the ones viem's own account writes (RFC 6979, low s:
// libsecp256k1-account.test.ts); a signature costs ~0.06 ms native against ~0.5-1 ms in viem's pure-JS curve.
// What is signed is hashed and serialised by viem as before; only the curve operation changes.
import { bytesToHex, hashMessage, hashTypedData, hexToBytes, keccak256, serializeTransaction, type Hex, type Signature } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { libsecp256k1 } from './libsecp256k1.ts';

export function libsecp256k1Account(privateKey: Hex): PrivateKeyAccount {
  const account = privateKeyToAccount(privateKey);
  const key = hexToBytes(privateKey);
  const signBytes = (hash: Hex) => libsecp256k1().sign(hexToBytes(hash), key);
  /** r || s || v of 27/28 in hex, as viem's serializeSignature writes it (without its detour through bigints) */
  const signHex = (hash: Hex): Hex => {
    const { signature, recoveryId } = signBytes(hash);
    return `${bytesToHex(signature)}${recoveryId ? '1c' : '1b'}`;
  };
  /** the signature in viem's shape, for a transaction's serializer */
  const signHash = (hash: Hex): Signature => {
    const { signature, recoveryId } = signBytes(hash);
    return { r: bytesToHex(signature.subarray(0, 32)), s: bytesToHex(signature.subarray(32)), v: recoveryId ? 28n : 27n, yParity: recoveryId };
  };
  const signTransaction: PrivateKeyAccount['signTransaction'] = async (transaction, options) => {
    const serializer = options?.serializer ?? serializeTransaction;
    // an EIP-4844 transaction is signed without its sidecars (the network wrapper), as viem signs it
    const signable = transaction.type === 'eip4844' ? { ...transaction, sidecars: false as const } : transaction;
    return serializer(transaction, signHash(keccak256(await serializer(signable)))) as never;
  };
  return {
    ...account,
    sign: async ({ hash }) => signHex(hash),
    signMessage: async ({ message }) => signHex(hashMessage(message)),
    signTransaction,
    signTypedData: async (typedData) => signHex(hashTypedData(typedData as Parameters<typeof hashTypedData>[0])),
  };
}
