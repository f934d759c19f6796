// Where state lives: the data directory, the payments ledger, the media store, and how long each keeps things.
import { z } from 'zod';

const fileMediaStore = z.object({
  /** files under <dataDir>/media */
  store: z.literal('file'),
});
const s3MediaStore = z.object({
  /** an S3-compatible bucket (AWS S3, MinIO, R2, ...) */
  store: z.literal('s3'),
  bucket: z.string().min(1),
  /** the store's endpoint, for S3-compatible services; omitted for AWS */
  endpoint: z.url().optional(),
  region: z.string().min(1),
  /** bucket in the path rather than the host name; most S3-compatible stores want this */
  forcePathStyle: z.boolean().default(false),
  /** names of the environment variables holding the credentials */
  accessKeyIdEnv: z.string().min(1),
  secretAccessKeyEnv: z.string().min(1),
  /** key prefix for media objects, e.g. "media/" */
  prefix: z.string().default(''),
});
export const mediaConfig = z.discriminatedUnion('store', [fileMediaStore, s3MediaStore]);
export type MediaConfig = z.infer<typeof mediaConfig>;

/** days until deletion; a century at most (a date past that is no date: pruning would fail every hour) */
const retentionDays = z.number().nonnegative().max(36_500, 'at most 36500 (a century); 0 keeps everything forever');

export const storageFields = {
  dataDir: z.string().default('.data'),
  /**
   * PostgreSQL connection string for the payments ledger (postgres://user:pass@host:5432/db), shared by every
   * instance behind a load balancer. Unset: the embedded SQLite ledger in dataDir (one instance only).
   */
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// connection string')
    // the driver reads it as a URL: one that does not parse (a port that is not a number) fails here, not at connect
    .refine((url) => URL.canParse(url), 'not a valid URL (check the host, the port, and that special characters in the password are percent-encoded)')
    .optional(),
  /** where generated media is kept */
  media: mediaConfig.default({ store: 'file' }),
  /** generated media is deleted this many days after it was made (checked hourly and at startup); 0 keeps it forever */
  mediaRetentionDays: retentionDays.default(30),
  /**
   * ledger rows in a final state (settled, failed, released), and payment identifiers, are deleted this many days after their last change
   * (checked hourly and at startup, in every instance); rows still in flight never are. 0 keeps them forever.
   */
  ledgerRetentionDays: retentionDays.int().default(90),
};
