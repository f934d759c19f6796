// A minimal writer for the GGUF v3 file format (the model format of llama.cpp): typed metadata
// key/values plus F32 / F16 tensors. Enough to build small models deterministically in code
// (see bigram-chat-gguf.ts); no quantised tensor types.
//
// Layout (all little-endian): magic "GGUF", u32 version, u64 tensor count, u64 metadata count,
// metadata (key, u32 type, value), tensor infos (name, u32 n_dims, u64 dims[], u32 ggml type,
// u64 offset into the data section), padding to `general.alignment`, then the tensor data, each
// tensor starting at a multiple of the alignment. dims[0] is the fastest-varying (row) dimension.

const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;

const ValueType = {
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
} as const;

/** ggml tensor types this writer can store */
export const GgmlType = { F32: 0, F16: 1 } as const;
export type GgmlTypeName = keyof typeof GgmlType;

export type GgufValue =
  | { type: 'uint32'; value: number }
  | { type: 'int32'; value: number }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'float32[]'; value: ArrayLike<number> }
  | { type: 'int32[]'; value: ArrayLike<number> };

export interface GgufTensor {
  name: string;
  /** dims[0] is the row length (contiguous); a matrix W used as y = W x has dims [in, out] */
  dims: readonly number[];
  type: GgmlTypeName;
  /** row-major values, dims[0] fastest; length must be the product of dims */
  data: Float32Array;
}

/** IEEE 754 binary16 bits of a number (round to nearest even; overflow to +-Infinity). */
const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

export function toFloat16Bits(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0); // Inf / NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow
  if (e <= 0) {
    if (e < -10) return sign; // underflow to zero
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++; // may carry into the exponent: still correct
  if (half >= 0x7c00) return sign | 0x7c00;
  return sign | half;
}

class ByteSink {
  private chunks: Uint8Array[] = [];
  length = 0;
  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }
  private view(size: number, write: (v: DataView) => void): void {
    const bytes = new Uint8Array(size);
    write(new DataView(bytes.buffer));
    this.push(bytes);
  }
  u32(v: number): void {
    this.view(4, (d) => d.setUint32(0, v, true));
  }
  i32(v: number): void {
    this.view(4, (d) => d.setInt32(0, v, true));
  }
  u64(v: number): void {
    this.view(8, (d) => d.setBigUint64(0, BigInt(v), true));
  }
  f32(v: number): void {
    this.view(4, (d) => d.setFloat32(0, v, true));
  }
  u8(v: number): void {
    this.push(Uint8Array.of(v));
  }
  string(s: string): void {
    const bytes = new TextEncoder().encode(s);
    this.u64(bytes.length);
    this.push(bytes);
  }
  raw(bytes: Uint8Array): void {
    this.push(bytes);
  }
  padTo(alignment: number): void {
    const pad = (alignment - (this.length % alignment)) % alignment;
    if (pad > 0) this.push(new Uint8Array(pad));
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  switch (value.type) {
    case 'uint32':
      sink.u32(ValueType.uint32);
      sink.u32(value.value);
      return;
    case 'int32':
      sink.u32(ValueType.int32);
      sink.i32(value.value);
      return;
    case 'float32':
      sink.u32(ValueType.float32);
      sink.f32(value.value);
      return;
    case 'bool':
      sink.u32(ValueType.bool);
      sink.u8(value.value ? 1 : 0);
      return;
    case 'string':
      sink.u32(ValueType.string);
      sink.string(value.value);
      return;
    case 'string[]':
      sink.u32(ValueType.array);
      sink.u32(ValueType.string);
      sink.u64(value.value.length);
      for (const s of value.value) sink.string(s);
      return;
    case 'float32[]':
      sink.u32(ValueType.array);
      sink.u32(ValueType.float32);
      sink.u64(value.value.length);
      for (let i = 0; i < value.value.length; i++) sink.f32(value.value[i]!);
      return;
    case 'int32[]':
      sink.u32(ValueType.array);
      sink.u32(ValueType.int32);
      sink.u64(value.value.length);
      for (let i = 0; i < value.value.length; i++) sink.i32(value.value[i]!);
      return;
  }
}

function tensorBytes(tensor: GgufTensor): Uint8Array {
  const count = tensor.dims.reduce((a, b) => a * b, 1);
  if (tensor.data.length !== count) {
    throw new Error(`tensor ${tensor.name}: ${tensor.data.length} values for dims [${tensor.dims.join(', ')}]`);
  }
  if (tensor.type === 'F32') {
    const out = new Uint8Array(count * 4);
    const view = new DataView(out.buffer);
    for (let i = 0; i < count; i++) view.setFloat32(i * 4, tensor.data[i]!, true);
    return out;
  }
  const out = new Uint8Array(count * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < count; i++) view.setUint16(i * 2, toFloat16Bits(tensor.data[i]!), true);
  return out;
}

/** Serialises a whole GGUF file in memory. Metadata keys keep the insertion order of `metadata`. */
export function writeGguf(metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensor[]): Uint8Array {
  const header = new ByteSink();
  header.u32(GGUF_MAGIC);
  header.u32(GGUF_VERSION);
  header.u64(tensors.length);
  header.u64(metadata.size);
  for (const [key, value] of metadata) {
    header.string(key);
    writeValue(header, value);
  }
  const data = new ByteSink();
  for (const tensor of tensors) {
    data.padTo(GGUF_ALIGNMENT);
    const offset = data.length;
    header.string(tensor.name);
    header.u32(tensor.dims.length);
    for (const dim of tensor.dims) header.u64(dim);
    header.u32(GgmlType[tensor.type]);
    header.u64(offset);
    data.raw(tensorBytes(tensor));
  }
  data.padTo(GGUF_ALIGNMENT);
  header.padTo(GGUF_ALIGNMENT);
  header.raw(data.concat());
  return header.concat();
}
