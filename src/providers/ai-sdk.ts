// The AI SDK (`ai`, ~6 MB resident with its bundled gateway provider; `ai/internal`, ~4 MB) is imported at the
// first generation that needs it, not at startup: an idle gateway, and one answering only 402s, never calls it.
// Images and speech use `ai`'s generate functions; chat (chat-completion.ts) the building blocks of ai/internal.
import type * as Ai from 'ai';
import type * as AiInternal from 'ai/internal';

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

let loadingInternal: Promise<typeof AiInternal> | undefined;

export function loadAiInternal(): Promise<typeof AiInternal> {
  return (loadingInternal ??= import('ai/internal'));
}
