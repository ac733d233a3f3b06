'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { layoutIndex, Histogram } = require('../histogram');

// The vectors every language's bucket function is tested against, read from the
// harness's test (tests/test_histogram.py) so there is one copy.
function vectors() {
  const text = fs.readFileSync(path.join(__dirname, '../../../tests/test_histogram.py'), 'utf8');
  const list = text.match(/VECTORS = \[([^\]]*)\]/)[1];
  return [...list.matchAll(/\(([^,]+), (\d+)\)/g)].map(([, v, b]) => [toBigInt(v.trim()), Number(b)]);
}

function toBigInt(expr) {
  const power = expr.match(/^(\d+)\*\*(\d+)$/);
  return power ? BigInt(power[1]) ** BigInt(power[2]) : BigInt(expr);
}

test('layoutIndex matches the harness vectors', () => {
  const cases = vectors();
  assert.ok(cases.length >= 10);
  for (const [value, bucket] of cases) assert.equal(layoutIndex(value), bucket, `value ${value}`);
});

test('negative values count as zero', () => assert.equal(layoutIndex(-5), 0));

test('the histogram counts, merges and reports sparse pairs by index', () => {
  const a = new Histogram();
  [10, 10, 1000, 2 ** 40].forEach((v) => a.record(v));
  const b = new Histogram();
  b.record(1000);
  a.merge(b);
  assert.deepEqual(a.sparse(), [[10, 2], [317, 2], [2240, 1]]);
  assert.equal(a.count, 5);
  assert.equal(a.max, 2 ** 40);
});

test('the small-value path agrees with the exact one', () => {
  for (const v of [0, 127, 128, 255, 256, 65535, 1e6, 2 ** 31 - 1]) {
    const h = new Histogram();
    h.record(v);
    assert.deepEqual(h.sparse(), [[layoutIndex(v), 1]]);
  }
});
