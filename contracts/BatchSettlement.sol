// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// The sandbox's x402 `batch-settlement` escrow, written from the scheme's EVM spec
// (specs/schemes/batch-settlement/scheme_batch_settlement_evm.md in coinbase/x402) with the ABI the official
// @x402/evm 2.27 client and facilitator call. The sandbox lays it, and its two deposit collectors, at their
// canonical addresses; the EIP-712 domain is computed from address(this) and block.chainid on every call, so
// the copied code signs for the address it sits at.

interface IERC20Minimal {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
}

/// @dev What a deposit collector does: move `amount` of `token` from `payer` into the settlement contract.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external;
}

/// @dev ECDSA for EOAs (strict: 65 bytes, low s) and ERC-1271 for contract signers.
library SignatureCheck {
    bytes4 internal constant ERC1271_MAGIC = 0x1626ba7e;
    uint256 internal constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    function recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (uint256(s) > MAX_S || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    function isValid(address signer, bytes32 digest, bytes memory signature) internal view returns (bool) {
        if (signer == address(0)) return false;
        if (signer.code.length == 0) return recover(digest, signature) == signer;
        (bool ok, bytes memory result) =
            signer.staticcall(abi.encodeWithSelector(ERC1271_MAGIC, digest, signature));
        return ok && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(ERC1271_MAGIC);
    }
}

contract X402BatchSettlement {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct PendingWithdrawal {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 15 minutes;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    mapping(bytes32 => ChannelState) public channels;
    mapping(bytes32 => PendingWithdrawal) public pendingWithdrawals;
    mapping(bytes32 => uint256) public refundNonce;
    mapping(address => mapping(address => ReceiverState)) public receivers;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event ChannelClosed(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, address collector, uint128 amount);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimedAmount, uint128 totalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 initiatedAt);
    event WithdrawFinalized(bytes32 indexed channelId, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount, uint256 nonce);

    error InvalidWithdrawDelay();
    error InvalidReceiverAuthorizer();
    error ZeroAmount();
    error DepositNotReceived();
    error InvalidVoucherSignature(bytes32 channelId);
    error InvalidAuthorizerSignature();
    error ClaimExceedsVoucher(bytes32 channelId);
    error ClaimExceedsBalance(bytes32 channelId);
    error MixedReceiverAuthorizers();
    error NotReceiver(bytes32 channelId);
    error NotPayer();
    error WithdrawExceedsUnclaimed();
    error WithdrawPending();
    error NoWithdrawPending();
    error WithdrawDelayNotElapsed();
    error InvalidRefundNonce();
    error TransferFailed();
    error Reentrancy();

    // EIP-1153 lock, as the deployed contract's ReentrancyGuardTransient: collectors and tokens are external code.
    bytes32 private constant LOCK_SLOT = keccak256("x402.batch-settlement.lock");

    modifier nonReentrant() {
        bytes32 slot = LOCK_SLOT;
        uint256 locked;
        assembly {
            locked := tload(slot)
        }
        if (locked != 0) revert Reentrancy();
        assembly {
            tstore(slot, 1)
        }
        _;
        assembly {
            tstore(slot, 0)
        }
    }

    // ---- views ----

    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _digest(_channelConfigHash(config));
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata c = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(c.voucher.channel),
                    c.voucher.maxClaimableAmount,
                    c.totalClaimed
                )
            );
        }
        return _digest(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // ---- deposits ----

    /// @notice Credits `amount` to the channel of `config`; `collector` moves the tokens (ERC-3009 or Permit2).
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (amount == 0) revert ZeroAmount();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert InvalidWithdrawDelay();
        }
        if (config.receiverAuthorizer == address(0)) revert InvalidReceiverAuthorizer();
        bytes32 channelId = getChannelId(config);
        IERC20Minimal token = IERC20Minimal(config.token);
        uint256 before = token.balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        // Trust no collector: the escrow must have grown by exactly the credited amount.
        if (token.balanceOf(address(this)) != before + amount) revert DepositNotReceived();

        ChannelState storage ch = channels[channelId];
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelCreated(channelId, config);
        ch.balance += amount;
        emit Deposited(channelId, msg.sender, collector, amount);
    }

    // ---- claims and settlement ----

    /// @notice Claims by the receiver or its authorizer directly (every row).
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata cfg = voucherClaims[i].voucher.channel;
            if (msg.sender != cfg.receiver && msg.sender != cfg.receiverAuthorizer) {
                revert NotReceiver(getChannelId(cfg));
            }
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Claims many channels in one call, relayed by anyone with the receiver authorizer's ClaimBatch signature.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) return;
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert MixedReceiverAuthorizers();
        }
        if (!SignatureCheck.isValid(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidAuthorizerSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _claim(voucherClaims[i]);
        }
    }

    /// @notice Transfers everything claimed and not yet settled for `receiver` in `token`. Permissionless.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage r = receivers[receiver][token];
        uint128 amount = r.totalClaimed - r.totalSettled;
        r.totalSettled = r.totalClaimed;
        if (amount > 0) _transfer(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ---- the payer's escape hatch ----

    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _onlyPayer(config);
        if (amount == 0) revert ZeroAmount();
        bytes32 channelId = getChannelId(config);
        ChannelState storage ch = channels[channelId];
        if (amount > ch.balance - ch.totalClaimed) revert WithdrawExceedsUnclaimed();
        PendingWithdrawal storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) revert WithdrawPending();
        pending.amount = amount;
        pending.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, pending.initiatedAt);
    }

    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _onlyPayer(config);
        bytes32 channelId = getChannelId(config);
        PendingWithdrawal memory pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt == 0) revert NoWithdrawPending();
        if (block.timestamp < uint256(pending.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();
        delete pendingWithdrawals[channelId];
        ChannelState storage ch = channels[channelId];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        // Whatever was claimed during the delay stays with the receiver.
        uint128 amount = pending.amount < unclaimed ? pending.amount : unclaimed;
        ch.balance -= amount;
        if (amount > 0) _transfer(config.token, config.payer, amount);
        emit WithdrawFinalized(channelId, amount);
        _closeIfDrained(channelId, config);
    }

    // ---- cooperative refunds ----

    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) {
            revert NotReceiver(getChannelId(config));
        }
        bytes32 channelId = getChannelId(config);
        _refund(channelId, config, amount, refundNonce[channelId]);
    }

    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (!SignatureCheck.isValid(
                config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
            )) revert InvalidAuthorizerSignature();
        _refund(channelId, config, amount, nonce);
    }

    /// @notice Runs several calls of this contract in one transaction (claim then refund, as the facilitator does).
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 0x20), mload(result))
                }
            }
            results[i] = result;
        }
    }

    // ---- internals ----

    function _claim(VoucherClaim calldata c) private {
        ChannelConfig calldata cfg = c.voucher.channel;
        bytes32 channelId = getChannelId(cfg);
        address voucherSigner = cfg.payerAuthorizer != address(0) ? cfg.payerAuthorizer : cfg.payer;
        bytes32 digest = getVoucherDigest(channelId, c.voucher.maxClaimableAmount);
        bool signed = cfg.payerAuthorizer != address(0)
            ? SignatureCheck.recover(digest, c.signature) == voucherSigner
            : SignatureCheck.isValid(voucherSigner, digest, c.signature);
        if (!signed) revert InvalidVoucherSignature(channelId);
        if (c.totalClaimed > c.voucher.maxClaimableAmount) revert ClaimExceedsVoucher(channelId);
        ChannelState storage ch = channels[channelId];
        if (c.totalClaimed > ch.balance) revert ClaimExceedsBalance(channelId);
        // Cumulative and monotonic: a row at or below what is already claimed changes nothing.
        if (c.totalClaimed <= ch.totalClaimed) return;
        uint128 delta = c.totalClaimed - ch.totalClaimed;
        ch.totalClaimed = c.totalClaimed;
        receivers[cfg.receiver][cfg.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, c.totalClaimed);
    }

    function _refund(bytes32 channelId, ChannelConfig calldata config, uint128 amount, uint256 nonce) private {
        if (amount == 0) revert ZeroAmount();
        // The nonce advances first, even when nothing is left to move.
        refundNonce[channelId] = nonce + 1;
        ChannelState storage ch = channels[channelId];
        uint128 unclaimed = ch.balance - ch.totalClaimed;
        uint128 refunded = amount < unclaimed ? amount : unclaimed;
        if (refunded == 0) return;
        ch.balance -= refunded;
        PendingWithdrawal storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) {
            if (refunded >= pending.amount) delete pendingWithdrawals[channelId];
            else pending.amount -= refunded;
        }
        _transfer(config.token, config.payer, refunded);
        emit Refunded(channelId, msg.sender, refunded, nonce);
        _closeIfDrained(channelId, config);
    }

    function _closeIfDrained(bytes32 channelId, ChannelConfig calldata config) private {
        ChannelState storage ch = channels[channelId];
        if (ch.balance == ch.totalClaimed && ch.totalClaimed == 0) emit ChannelClosed(channelId, config);
    }

    function _onlyPayer(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && (config.payerAuthorizer == address(0) || msg.sender != config.payerAuthorizer)) {
            revert NotPayer();
        }
    }

    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory result) = token.call(abi.encodeCall(IERC20Minimal.transfer, (to, amount)));
        if (!ok || (result.length != 0 && !abi.decode(result, (bool)))) revert TransferFailed();
    }

    function _channelConfigHash(ChannelConfig calldata c) private pure returns (bytes32) {
        return keccak256(
            abi.encode(
                CHANNEL_CONFIG_TYPEHASH,
                c.payer,
                c.payerAuthorizer,
                c.receiver,
                c.receiverAuthorizer,
                c.token,
                c.withdrawDelay,
                c.salt
            )
        );
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }
}

/// @dev The canonical address the official client and facilitator use for the escrow.
address constant BATCH_SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;
address constant PERMIT2 = 0x000000000022D473030F116dDEE9F6B43aC78BA3;

interface IERC3009Receive {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @notice Deposits by ERC-3009 `receiveWithAuthorization`: the payer signs `to` = this collector and a nonce
/// bound to the channel (keccak256(abi.encode(channelId, salt))), so an authorization funds one channel only.
contract ERC3009DepositCollector is IDepositCollector {
    error OnlySettlement();
    error TransferFailed();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlySettlement();
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(data, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IERC3009Receive(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        (bool ok, bytes memory result) = token.call(abi.encodeCall(IERC20Minimal.transfer, (BATCH_SETTLEMENT, amount)));
        if (!ok || (result.length != 0 && !abi.decode(result, (bool)))) revert TransferFailed();
    }
}

interface IPermit2SignatureTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

interface IERC2612 {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @notice Deposits by a Permit2 witness transfer (spender this collector, witness the channel id), with an
/// optional EIP-2612 permit that first grants Permit2 its allowance.
contract Permit2DepositCollector is IDepositCollector {
    error OnlySettlement();

    string public constant WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata data) external {
        if (msg.sender != BATCH_SETTLEMENT) revert OnlySettlement();
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory eip2612) =
            abi.decode(data, (uint256, uint256, bytes, bytes));
        if (eip2612.length > 0) _permitPermit2(payer, token, eip2612);
        IPermit2SignatureTransfer(PERMIT2).permitWitnessTransferFrom(
            IPermit2SignatureTransfer.PermitTransferFrom({
                permitted: IPermit2SignatureTransfer.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            IPermit2SignatureTransfer.SignatureTransferDetails({to: BATCH_SETTLEMENT, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(WITNESS_TYPEHASH, channelId)),
            WITNESS_TYPE_STRING,
            signature
        );
    }

    function _permitPermit2(address payer, address token, bytes memory eip2612) private {
        (uint256 value, uint256 permitDeadline, uint8 v, bytes32 r, bytes32 s) =
            abi.decode(eip2612, (uint256, uint256, uint8, bytes32, bytes32));
        // A permit already used (front-run) leaves the allowance in place; Permit2 then decides.
        try IERC2612(token).permit(payer, PERMIT2, value, permitDeadline, v, r, s) {} catch {}
    }
}
