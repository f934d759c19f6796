// libsecp256k1 for the two curve operations on a paid call's path: a buyer signing a digest (a voucher, an
// authorization) and the gateway recovering who signed one. The native binding (`secp256k1`, prebuilt for Linux,
// macOS and Windows) where it loads: ~60-80 us a signature. Elsewhere tiny-secp256k1, the same C library compiled
// to WebAssembly: ~140-260 us. Both make the same signature byte for byte (RFC 6979 nonces, low s) and recover the
// same key (libsecp256k1.test.ts). Only the package's binding is loaded, never its pure-JS fallback (elliptic):
// where no prebuilt binary fits, the WebAssembly build is the fallback.
import { createRequire } from 'node:module';

export interface Libsecp256k1 {
  readonly build: 'native' | 'webassembly';
  /** `digest` signed by `privateKey`: r || s (low s) and the recovery id */
  sign(digest: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recoveryId: number };
  /** the uncompressed public key (65 bytes) whose signature r || s over `digest` this is; undefined when none is */
  recover(digest: Uint8Array, signature: Uint8Array, recoveryId: 0 | 1): Uint8Array | undefined;
}

const require = createRequire(import.meta.url);

/** The subset of `secp256k1`'s API used here (the package ships no types). */
interface SecpBinding {
  ecdsaSign(digest: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(signature: Uint8Array, recoveryId: number, digest: Uint8Array, compressed: false): Uint8Array;
}

/** The native binding, or undefined where its prebuilt binary does not load (another platform, another libc). */
export function nativeLibsecp256k1(): Libsecp256k1 | undefined {
  let binding: SecpBinding;
  try {
    binding = require('secp256k1/bindings.js') as SecpBinding;
  } catch {
    return undefined;
  }
  return {
    build: 'native',
    sign(digest, privateKey) {
      const { signature, recid } = binding.ecdsaSign(digest, privateKey);
      return { signature, recoveryId: recid };
    },
    recover(digest, signature, recoveryId) {
      try {
        return binding.ecdsaRecover(signature, recoveryId, digest, false);
      } catch {
        return undefined; // an r that is no curve point's x
      }
    },
  };
}

/**
 * The WebAssembly build. Its instance holds ~14 MB of memory (a bare node 44 MB, 57 MB once it is imported), so it
 * is loaded only where it is used.
 */
export function webAssemblyLibsecp256k1(): Libsecp256k1 {
  const wasm = require('tiny-secp256k1') as typeof import('tiny-secp256k1');
  return {
    build: 'webassembly',
    sign(digest, privateKey) {
      return wasm.signRecoverable(digest, privateKey);
    },
    recover(digest, signature, recoveryId) {
      try {
        return wasm.recover(digest, signature, recoveryId, false) ?? undefined;
      } catch {
        return undefined;
      }
    },
  };
}

let loaded: Libsecp256k1 | undefined;

/** libsecp256k1, loaded at its first use (not at startup): native where it can be, else WebAssembly. */
export function libsecp256k1(): Libsecp256k1 {
  return (loaded ??= nativeLibsecp256k1() ?? webAssemblyLibsecp256k1());
}
