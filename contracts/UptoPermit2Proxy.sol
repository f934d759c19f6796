// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev The part of Permit2's SignatureTransfer this proxy calls (Uniswap Permit2, ISignatureTransfer).
interface ISignatureTransfer {
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

/// @dev EIP-2612, as USDC implements it.
interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @title UptoPermit2Proxy
/// @notice The x402 `upto` settlement proxy for local chains: our own contract with the interface of
/// x402's x402UptoPermit2Proxy (functions, structs, errors, events), so the official x402 EVM client's
/// signatures and the facilitator's calls work against it unchanged. The payer signs a Permit2
/// PermitWitnessTransferFrom whose spender is this contract, for at most `permitted.amount`, bound by its
/// witness to one recipient and one facilitator; the facilitator settles any amount up to that, once.
contract UptoPermit2Proxy {
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    ISignatureTransfer public immutable PERMIT2;

    event Settled();
    event SettledWithPermit();
    /// @notice the payer's EIP-2612 permit was not executed (already used, or an allowance exists); settlement went on
    event EIP2612PermitFailed(address indexed token, address indexed owner, bytes data);

    error InvalidPermit2Address();
    error InvalidDestination();
    error InvalidOwner();
    error InvalidAmount();
    error PaymentTooEarly();
    error AmountExceedsPermitted();
    error UnauthorizedFacilitator();
    error Permit2612AmountMismatch();
    error ReentrancyGuardReentrantCall();

    // a transient-storage slot (EIP-1153), so the lock costs no lasting storage
    bytes32 private constant LOCK_SLOT = keccak256("UptoPermit2Proxy.lock");

    constructor(address permit2) {
        if (permit2 == address(0)) revert InvalidPermit2Address();
        PERMIT2 = ISignatureTransfer(permit2);
    }

    modifier nonReentrant() {
        bytes32 slot = LOCK_SLOT;
        uint256 locked;
        assembly {
            locked := tload(slot)
        }
        if (locked != 0) revert ReentrancyGuardReentrantCall();
        assembly {
            tstore(slot, 1)
        }
        _;
        assembly {
            tstore(slot, 0)
        }
    }

    /// @notice Moves `amount` (at most the permitted amount) from `owner` to `witness.to`.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /// @notice Like settle, after giving Permit2 an allowance through the payer's EIP-2612 permit, so a payer
    /// without native gas never has to send an approve transaction.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        if (permit2612.value != permit.permitted.amount) revert Permit2612AmountMismatch();
        _tryPermit(permit.permitted.token, owner, permit2612);
        _settle(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    /// @dev A failed permit does not stop settlement: the allowance may exist already (a replayed permit),
    /// and Permit2 then decides.
    function _tryPermit(address token, address owner, EIP2612Permit calldata p) private {
        try IERC20Permit(token).permit(owner, address(PERMIT2), p.value, p.deadline, p.v, p.r, p.s) {}
        catch (bytes memory data) {
            emit EIP2612PermitFailed(token, owner, data);
        }
    }

    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        // Only the facilitator the payer named may choose the amount.
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (amount == 0) revert InvalidAmount();
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (owner == address(0)) revert InvalidOwner();
        if (witness.to == address(0)) revert InvalidDestination();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();

        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
