// Tokens a chat call used, as the model counted them: what the usage headers, the OpenAI-shaped bodies and
// (for schemes that charge by use) settlement read.
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** of promptTokens, those the provider reports as read from its prompt cache (priced by cachedInputPercent) */
  cachedInputTokens?: number | undefined;
  /** of promptTokens, those the provider reports as written to its prompt cache (priced as any input) */
  cacheWriteInputTokens?: number | undefined;
  /** of completionTokens, those the provider reports as reasoning */
  reasoningTokens?: number | undefined;
}
