// What the server tells an MCP client at initialize (2025-11-25 and earlier): what it sells and how a tool call is
// paid, in either binding of the x402 MCP transport.
import { NETWORKS, type NetworkName } from '../../x402/networks.ts';
import { MODELS_TOOL, type PaidTool } from './tools.ts';

export function mcpInstructions(tools: readonly PaidTool[], networks: readonly NetworkName[]): string {
  return [
    `Paid AI generation: ${tools.map((tool) => `${tool.name} (${tool.operation.description.toLowerCase()})`).join(', ')}. Each call is paid in USDC through x402 (the x402 MCP transport); ${MODELS_TOOL} is free and lists the models with their prices (also the resources x402-ai://models and x402-ai://prices).`,
    'How to pay:',
    '1. Call the tool without payment. You get the x402 v2 PaymentRequired for exactly that input: as structuredContent of an error result (isError: true; content[0].text holds the same JSON), or, on MCP 2026-07-28 when your request advertises the org.x402/payment extension, as result.paymentRequired of a result of type "payment_required". accepts[] lists every network and scheme you may pay with, amounts in USDC atomic units (6 decimals). Pass `network` to be offered just that network with every scheme it has.',
    '2. Sign one of the accepted requirements with an x402 client (an x402Client of @x402/core with the schemes of @x402/evm or @x402/svm) and call the tool again with the SAME arguments and the PaymentPayload object in params._meta["x402/payment"].',
    '3. The payment is verified before the work runs and settled only after it succeeded: the result carries the settlement receipt in _meta["x402/payment-response"] and the amount charged in structuredContent. A failed generation or settlement charges nothing. A payment pays for one call with that exact input; sending it again returns the same result without a second charge.',
    '4. An image or audio you paid for is also an MCP resource (the resource_link of the result): resources/read it with a sign-in-with-x of the paying wallet in params._meta["x402/sign-in-with-x"].',
    `Networks: ${networks.map((name) => `${name} (${NETWORKS[name].caip2})`).join(', ')}.`,
  ].join('\n');
}
