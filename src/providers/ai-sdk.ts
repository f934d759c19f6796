// The AI SDK's generation functions (`ai` with its bundled gateway provider: ~6 MB resident) are imported at
// the first image or speech generation, not at startup: an idle gateway, and one answering only 402s, never
// calls them. Chat calls its model directly (chat-completion.ts) and needs only types from `ai`.
import type * as Ai from 'ai';

/** ai@7 ships generateSpeech (stable) but its type declarations only name the deprecated experimental alias,
 * which warns on every process; same function, so the stable one is handed out under the alias's type. */
export interface AiSdk {
  generateImage: typeof Ai.generateImage;
  generateSpeech: typeof Ai.experimental_generateSpeech;
}

let loading: Promise<AiSdk> | undefined;

export function loadAiSdk(): Promise<AiSdk> {
  return (loading ??= import('ai').then((ai) => ({
    generateImage: ai.generateImage,
    generateSpeech: (ai as unknown as { generateSpeech: typeof Ai.experimental_generateSpeech }).generateSpeech,
  })));
}
