// Tokens a chat call used, as the model counted them: what the usage headers, the OpenAI-shaped bodies and
// (for schemes that charge by use) settlement read.
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
