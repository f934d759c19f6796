// Builds the built-in demo chat model: a word-bigram Markov chain trained on DEMO_CHAT_CORPUS,
// packed as a 1-layer llama-architecture GGUF that llama.cpp loads and runs like any other model.
//
// How the bigram becomes a transformer (exactly, not approximately):
// - every token's embedding is the one-hot vector of its "context class" (one class per word or
//   punctuation mark seen in training, one for the assistant marker, one shared by everything
//   else: bytes, word prefixes, other special tokens);
// - attention and feed-forward weights are zero, so the residual stream stays that one-hot vector;
// - the final RMSNorm turns a one-hot vector v into sqrt(n_embd)*v; the norm weight 1/sqrt(n_embd)
//   undoes that, so the output projection reads one column: logit(next | class) = log P(next | class).
// The tokenizer is a SentencePiece-style ("llama") vocabulary: whole words "▁word", the "▁"-prefixes
// of those words (so llama.cpp's score-ordered merging reaches the whole word), the characters of
// the corpus, 256 byte-fallback tokens, and the chat markers <|system|> <|user|> <|assistant|> </s>.
//
// What it is good for: a deterministic, honest, tiny model that exercises the whole llama.cpp path
// (load, chat template, tokenizer, sampling, usage counting) offline. It does not understand the
// prompt: only the previous word conditions the next one. Its output is fluent-looking nonsense.

import { DEMO_CHAT_CONTEXT_LENGTH, DEMO_CHAT_MODEL_NAME, DEMO_CHAT_MODEL_VERSION } from '../../config/engines.ts';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEMO_CHAT_CORPUS } from './demo-chat-corpus.ts';
import { writeGguf, type GgufTensor, type GgufValue } from './gguf-writer.ts';


const SPACE = '\u2581'; // "▁", SentencePiece's word-boundary marker
const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;
const SPECIAL = ['<unk>', '<s>', '</s>', '<|system|>', '<|user|>', '<|assistant|>'] as const;
const EOS = 2;
const ASSISTANT = 5;
/** logit of tokens the model never generates (bytes, prefixes, markers): e^-30 ~ 1e-13 */
const NEVER = -30;
/** weight of the unigram prior mixed into every bigram row (Dirichlet smoothing) */
const SMOOTHING = 1;
const HEAD_DIM = 32;
const FFN_DIM = 32;

const CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>' }}{{ message['content'] }}{{ eos_token }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

/** Splits the corpus into answers, each a list of units: "▁word" or a punctuation mark. */
export function corpusAnswers(corpus: string = DEMO_CHAT_CORPUS): string[][] {
  return corpus
    .split(/\n\s*\n/)
    .map((p) => p.trim().replace(/\s+/g, ' '))
    .filter((p) => p.length > 0)
    .map((p) => {
      const units: string[] = [];
      for (const match of p.matchAll(/(\s*)([A-Za-z0-9']+|[^\sA-Za-z0-9'])/g)) {
        const [, space, unit] = match;
        units.push(/^[A-Za-z0-9']/.test(unit!) || space ? SPACE + unit! : unit!);
      }
      // the first word of an answer follows the assistant marker: give it the space marker too
      if (units[0] && !units[0].startsWith(SPACE)) units[0] = SPACE + units[0];
      return units;
    });
}

export interface DemoModelStats {
  vocabSize: number;
  embeddingLength: number;
  trainingWords: number;
  distinctUnits: number;
  bytes: number;
}

/** Builds the GGUF bytes. Pure and deterministic: the same corpus gives the same file. */
export function buildBigramChatGguf(corpus: string = DEMO_CHAT_CORPUS): { bytes: Uint8Array; stats: DemoModelStats } {
  const answers = corpusAnswers(corpus);

  // -- vocabulary ---------------------------------------------------------------------------
  const units = [...new Set(answers.flat())].sort();
  const pieces = new Set<string>();
  for (const unit of units) {
    for (const ch of unit) pieces.add(ch);
    if (unit.startsWith(SPACE)) {
      const chars = [...unit];
      for (let n = 2; n <= chars.length; n++) pieces.add(chars.slice(0, n).join(''));
    } else {
      pieces.add(unit);
    }
  }
  const tokens: string[] = [...SPECIAL];
  const types: number[] = SPECIAL.map((t) => (t === '<unk>' ? TOKEN_TYPE.unknown : TOKEN_TYPE.control));
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN_TYPE.byte);
  }
  const normalStart = tokens.length;
  for (const piece of [...pieces].sort()) {
    tokens.push(piece);
    types.push(TOKEN_TYPE.normal);
  }
  const scores = tokens.map((t, i) => (i < normalStart ? 0 : [...t].length)); // longer pieces merge first
  const tokenId = new Map(tokens.map((t, i) => [t, i]));
  const vocabSize = tokens.length;

  // -- context classes and bigram counts --------------------------------------------------
  const classOf = new Map<number, number>(); // token id -> class
  units.forEach((u, i) => classOf.set(tokenId.get(u)!, i));
  const startClass = units.length;
  const otherClass = units.length + 1;
  classOf.set(ASSISTANT, startClass);
  const classes = units.length + 2;
  const embeddingLength = Math.ceil(classes / 32) * 32;

  const counts: Map<number, number>[] = Array.from({ length: classes }, () => new Map());
  const unigram = new Map<number, number>();
  let trainingWords = 0;
  for (const answer of answers) {
    const ids = [...answer.map((u) => tokenId.get(u)!), EOS];
    let prevClass = startClass;
    for (const id of ids) {
      counts[prevClass]!.set(id, (counts[prevClass]!.get(id) ?? 0) + 1);
      unigram.set(id, (unigram.get(id) ?? 0) + 1);
      if (id !== EOS) prevClass = classOf.get(id)!;
      trainingWords++;
    }
  }
  const unigramTotal = trainingWords;
  const generatable = [...unigram.keys()].sort((a, b) => a - b);

  // -- tensors --------------------------------------------------------------------------------
  const embd = new Float32Array(embeddingLength * vocabSize);
  for (let v = 0; v < vocabSize; v++) embd[v * embeddingLength + (classOf.get(v) ?? otherClass)] = 1;

  const output = new Float32Array(embeddingLength * vocabSize).fill(NEVER);
  for (let c = 0; c < classes; c++) {
    const row = c === otherClass ? new Map<number, number>() : counts[c]!;
    const rowTotal = [...row.values()].reduce((a, b) => a + b, 0);
    for (const v of generatable) {
      const prior = unigram.get(v)! / unigramTotal;
      const p = ((row.get(v) ?? 0) + SMOOTHING * prior) / (rowTotal + SMOOTHING);
      output[v * embeddingLength + c] = Math.log(p);
    }
  }

  const filled = (n: number, value: number) => new Float32Array(n).fill(value);
  const zeros = (n: number) => new Float32Array(n);
  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dims: [embeddingLength, vocabSize], type: 'F16', data: embd },
    { name: 'output_norm.weight', dims: [embeddingLength], type: 'F32', data: filled(embeddingLength, 1 / Math.sqrt(embeddingLength)) },
    { name: 'output.weight', dims: [embeddingLength, vocabSize], type: 'F16', data: output },
    { name: 'blk.0.attn_norm.weight', dims: [embeddingLength], type: 'F32', data: filled(embeddingLength, 1) },
    { name: 'blk.0.attn_q.weight', dims: [embeddingLength, HEAD_DIM], type: 'F32', data: zeros(embeddingLength * HEAD_DIM) },
    { name: 'blk.0.attn_k.weight', dims: [embeddingLength, HEAD_DIM], type: 'F32', data: zeros(embeddingLength * HEAD_DIM) },
    { name: 'blk.0.attn_v.weight', dims: [embeddingLength, HEAD_DIM], type: 'F32', data: zeros(embeddingLength * HEAD_DIM) },
    { name: 'blk.0.attn_output.weight', dims: [HEAD_DIM, embeddingLength], type: 'F32', data: zeros(embeddingLength * HEAD_DIM) },
    { name: 'blk.0.ffn_norm.weight', dims: [embeddingLength], type: 'F32', data: filled(embeddingLength, 1) },
    { name: 'blk.0.ffn_gate.weight', dims: [embeddingLength, FFN_DIM], type: 'F32', data: zeros(embeddingLength * FFN_DIM) },
    { name: 'blk.0.ffn_up.weight', dims: [embeddingLength, FFN_DIM], type: 'F32', data: zeros(embeddingLength * FFN_DIM) },
    { name: 'blk.0.ffn_down.weight', dims: [FFN_DIM, embeddingLength], type: 'F32', data: zeros(embeddingLength * FFN_DIM) },
  ];

  const meta = new Map<string, GgufValue>([
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: DEMO_CHAT_MODEL_NAME }],
    ['general.version', { type: 'string', value: String(DEMO_CHAT_MODEL_VERSION) }],
    [
      'general.description',
      {
        type: 'string',
        value:
          'Word-bigram Markov chain trained on a few pages of original text, packed as a 1-layer llama GGUF. ' +
          'Not an instruct model: it ignores the prompt except the last token; output is fluent-looking nonsense. For offline demos and tests.',
      },
    ],
    ['general.alignment', { type: 'uint32', value: 32 }],
    ['llama.vocab_size', { type: 'uint32', value: vocabSize }],
    ['llama.context_length', { type: 'uint32', value: DEMO_CHAT_CONTEXT_LENGTH }],
    ['llama.embedding_length', { type: 'uint32', value: embeddingLength }],
    ['llama.block_count', { type: 'uint32', value: 1 }],
    ['llama.feed_forward_length', { type: 'uint32', value: FFN_DIM }],
    ['llama.attention.head_count', { type: 'uint32', value: 1 }],
    ['llama.attention.head_count_kv', { type: 'uint32', value: 1 }],
    ['llama.attention.key_length', { type: 'uint32', value: HEAD_DIM }],
    ['llama.attention.value_length', { type: 'uint32', value: HEAD_DIM }],
    ['llama.rope.dimension_count', { type: 'uint32', value: HEAD_DIM }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: 1e-10 }],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'string[]', value: tokens }],
    ['tokenizer.ggml.scores', { type: 'float32[]', value: scores }],
    ['tokenizer.ggml.token_type', { type: 'int32[]', value: types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'uint32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'uint32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'uint32', value: EOS }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    ['tokenizer.ggml.add_space_prefix', { type: 'bool', value: true }],
    ['tokenizer.chat_template', { type: 'string', value: CHAT_TEMPLATE }],
  ]);

  const bytes = writeGguf(meta, tensors);
  return {
    bytes,
    stats: { vocabSize, embeddingLength, trainingWords, distinctUnits: units.length, bytes: bytes.length },
  };
}

/**
 * Writes the demo model to `path` unless a file is already there. The write goes through a
 * temporary file and a rename, so concurrent callers never see a half-written model.
 */
export async function ensureDemoChatModel(path: string): Promise<{ created: boolean }> {
  if (existsSync(path)) return { created: false };
  await mkdir(dirname(path), { recursive: true });
  const { bytes } = buildBigramChatGguf();
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
  return { created: true };
}
