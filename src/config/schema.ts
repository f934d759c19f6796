// The one validated configuration object. Every field has a default that runs offline (sandbox mode).
// Each section is its own module under schema/; this file puts them together and is what the rest imports.
import { z } from 'zod';
import { serverFields } from './schema/server.ts';
import { storageFields } from './schema/storage.ts';
import { operationsFields } from './schema/operations.ts';
import { sandboxFields } from './schema/sandbox.ts';
import { networkFields } from './schema/networks.ts';
import { paymentFields } from './schema/payments.ts';
import { serviceFields } from './schema/service.ts';
import { catalogFields } from './schema/models.ts';

export { SANDBOX_NETWORK_NAMES } from './schema/sandbox.ts';
export type { NetworkConfig } from './schema/networks.ts';
export { mediaConfig, type MediaConfig } from './schema/storage.ts';
export {
  atomicAmount,
  isNeverPassedOption,
  chatModel,
  imageModel,
  speechModel,
  modelConfig,
  type ChatModelConfig,
  type ImageModelConfig,
  type SpeechModelConfig,
  type ModelConfig,
  type Capability,
} from './schema/models.ts';

export const configSchema = z
  .object({
    ...serverFields,
    ...storageFields,
    ...operationsFields,
    ...sandboxFields,
    ...networkFields,
    ...paymentFields,
    ...serviceFields,
    ...catalogFields,
  })
  .strict();

export type ConfigInput = z.input<typeof configSchema>;
export type ParsedConfig = z.output<typeof configSchema>;
