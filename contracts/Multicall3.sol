// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title The batch calls of Multicall3 that settlement batching and x402 batch-settlement use, for the sandbox chains.
/// @notice Our own source for the two functions called here, with Multicall3's interface
///         (aggregate3, selector 0x82ad56cb, for settlement batching; tryAggregate, selector 0xbce38bd7, for the
///         official x402 batch-settlement reads), so the same calldata works against the canonical deployment
///         at 0xcA11bde05977b3631167028862bE2a173976CA11 on base and polygon. It holds no state and no
///         funds; anyone may call it, and each call runs with this contract as msg.sender.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Calls each target in order. A failing call with allowFailure set is recorded and the
    ///         others go on; one without it reverts the whole batch.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            Call3 calldata call = calls[i];
            (bool success, bytes memory ret) = call.target.call(call.callData);
            if (!success && !call.allowFailure) revert("Multicall3: call failed");
            returnData[i] = Result(success, ret);
        }
    }

    /// @notice Calls each target in order; with requireSuccess unset a failing call is recorded, not fatal.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (!success && requireSuccess) revert("Multicall3: call failed");
            returnData[i] = Result(success, ret);
        }
    }
}
