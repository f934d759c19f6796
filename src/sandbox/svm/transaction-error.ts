// litesvm reports transaction errors as native objects and numeric enums; Solana RPC clients expect the
// JSON shape a validator answers with ("BlockhashNotFound", {"InstructionError":[2,{"Custom":1}]}).
// The names are listed here because litesvm declares its enums as `const enum` (no usable runtime object).

export type TransactionErrorJson = string | Record<string, unknown>;

const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
] as const;

const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable',
  'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner',
  'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
] as const;

function instructionError(err: unknown): TransactionErrorJson {
  if (typeof err === 'number') return INSTRUCTION_ERRORS[err] ?? 'GenericError';
  if (err && typeof err === 'object') {
    if ('code' in err) return { Custom: Number(err.code) };
    if ('msg' in err) return { BorshIoError: String(err.msg) };
  }
  return 'GenericError';
}

/** Converts the `err()` of a litesvm FailedTransactionMetadata to the RPC's JSON form. */
export function transactionErrorJson(err: unknown): TransactionErrorJson {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? 'SanitizeFailure';
  if (err && typeof err === 'object') {
    const e = err as { index?: number; accountIndex?: number; err?: () => unknown; constructor: { name: string } };
    if (typeof e.err === 'function' && typeof e.index === 'number') return { InstructionError: [e.index, instructionError(e.err())] };
    if (typeof e.index === 'number') return { DuplicateInstruction: e.index };
    if (typeof e.accountIndex === 'number') {
      const name = e.constructor.name.includes('Restricted') ? 'ProgramExecutionTemporarilyRestricted' : 'InsufficientFundsForRent';
      return { [name]: { account_index: e.accountIndex } };
    }
  }
  return String(err);
}

/** The human text a validator's preflight puts in its error message. */
export function describeTransactionError(err: TransactionErrorJson): string {
  if (err === 'BlockhashNotFound') return 'Blockhash not found';
  if (err === 'AlreadyProcessed') return 'This transaction has already been processed';
  if (err === 'SignatureFailure') return 'Transaction did not pass signature verification';
  if (err === 'InsufficientFundsForFee') return 'Attempt to debit an account but found no record of a prior credit.';
  return typeof err === 'string' ? err : JSON.stringify(err);
}
