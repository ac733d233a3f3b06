'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { Options } = require('../options');

test('typed readers return the value or the fallback', () => {
  const o = new Options({ flag: true, n: 3, mode: 'a' });
  assert.equal(o.bool('flag'), true);
  assert.equal(o.bool('absent'), false);
  assert.equal(o.int('n', 1), 3);
  assert.equal(o.int('absent', 7), 7);
  assert.equal(o.oneOf('mode', ['a', 'b'], 'b'), 'a');
});

test('a value of the wrong type is an internal error naming it', () => {
  assert.throws(() => new Options({ flag: 1 }).bool('flag'), { kind: 'internal', message: /flag = 1/ });
  assert.throws(() => new Options({ n: 1.5 }).int('n', 0), { kind: 'internal', message: /n = 1.5/ });
  assert.throws(() => new Options({ mode: 'c' }).oneOf('mode', ['a'], 'a'), { message: /expected one of a/ });
});

test('an unknown option is refused by name', () => {
  assert.throws(() => new Options({ b: 1, a: 2 }).unknown('a'),
    { kind: 'internal', message: /unknown option b \(known here: a\)/ });
  new Options({ a: 1 }).unknown('a');
});
