// Tokens a chat call used, as the model counted them: what the usage headers, the OpenAI-shaped bodies and
// (for schemes that charge by use) settlement read.
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** prompt tokens read from the provider's cache, when it reports them */
  cachedPromptTokens?: number | undefined;
  /** completion tokens spent on reasoning, when the model reports them */
  reasoningTokens?: number | undefined;
}
