import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APICallError, RetryError } from 'ai';
import { ApiError } from '../errors.ts';
import { toUpstreamError } from './upstream-errors.ts';

const busy = new APICallError({ message: 'busy', url: 'http://upstream.test/v1', requestBodyValues: {}, statusCode: 429 });

test('when the AI SDK gave up retrying, the last upstream answer decides: a busy upstream is a 503 to retry later', () => {
  const gaveUp = new RetryError({ message: 'failed after 3 attempts', reason: 'maxRetriesExceeded', errors: [busy, busy, busy] });
  const error = toUpstreamError(gaveUp, 'm');
  assert.equal(error.status, 503);
  assert.equal(error.code, 'upstream_unavailable');
  assert.equal(error.headers['Retry-After'], '10');
});

test('a timeout is a 504 and anything unknown a 502, each saying nothing was charged', () => {
  const timeout = toUpstreamError(new DOMException('timed out', 'TimeoutError'), 'm');
  assert.deepEqual([timeout.status, timeout.code], [504, 'upstream_timeout']);
  const unknown = toUpstreamError(new Error('socket hang up'), 'm');
  assert.deepEqual([unknown.status, unknown.code], [502, 'upstream_error']);
  assert.match(unknown.message, /nothing was charged/);
});

test('an ApiError passes through as it is', () => {
  const own = new ApiError(400, 'invalid_request', 'n: at most 4 images');
  assert.equal(toUpstreamError(own, 'm'), own);
});
