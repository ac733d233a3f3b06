'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { PassThrough } = require('node:stream');
const { makeFrames, FrameReader } = require('../src/frames');

test('frames carry their length and one value each, the value changing per frame', () => {
  const frames = makeFrames(5, 1000);
  assert.equal(frames.length, 251);
  assert.deepEqual([...frames[3]], [0, 0, 0, 5, 3, 3, 3, 3, 3]);
  assert.equal(makeFrames(5, 2).length, 2);
});

test('the reader rebuilds frames split and joined anyhow across chunks', async () => {
  const stream = new PassThrough();
  const reader = new FrameReader(stream);
  const [a, b] = makeFrames(3, 2);
  const bytes = Buffer.concat([a, b]);
  stream.write(bytes.subarray(0, 2));
  stream.write(bytes.subarray(2, 9));
  stream.end(bytes.subarray(9));
  assert.deepEqual([...(await reader.next())], [0, 0, 0]);
  assert.deepEqual([...(await reader.next())], [1, 1, 1]);
  assert.equal(await reader.next(), null);
});
